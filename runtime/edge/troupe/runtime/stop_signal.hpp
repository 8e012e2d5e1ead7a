#pragma once

#include "troupe/runtime/clock.hpp"

/// @file
/// SIGTERM / SIGINT as a stop request for a process's main loop.
///
/// The handler only sets an atomic flag (async-signal-safe); the main
/// thread polls it and then shuts its node down gracefully (releasing
/// leases). The coordinated shutdown of a cluster node builds on this.

namespace troupe::runtime {

/// Installs handlers for SIGTERM and SIGINT that set the stop flag.
/// Idempotent. Thread-safe.
void install_stop_signal_handlers();

/// True once SIGTERM or SIGINT arrived (or `request_stop` was called).
bool stop_requested() noexcept;

/// Sets the stop flag, as a signal would.
void request_stop() noexcept;

/// Sleeps up to `d`, returning early (within ~10ms) when a stop is
/// requested. Returns `stop_requested()`.
bool sleep_unless_stopped(timespan d);

} // namespace troupe::runtime
