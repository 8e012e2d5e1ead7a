#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

/// @file
/// Free TCP ports for tests that must name a port before a process binds it
/// (a seed node's address, an etcd member's URLs).

namespace troupe::test {

/// `n` distinct TCP ports on 127.0.0.1 that were free a moment ago: every
/// socket stays bound until all are chosen, so one call never returns a
/// port twice. Another process may still take one before the caller binds
/// it (the kernel hands out ephemeral ports round-robin, so this is rare).
/// Throws std::runtime_error naming the failed call (test support only).
std::vector<uint16_t> free_ports(size_t n);

} // namespace troupe::test
