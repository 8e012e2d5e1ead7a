#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/http_connection.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The demo's client load driver: worker threads that send deposits to the
/// nodes' app API and log what happened to DIR/client.log (client_log.hpp)
/// for the verdict. Edge: plain threads and blocking Boost.Beast HTTP on
/// kept-alive connections (http_connection.hpp); no CAF.

namespace troupe::demo::client {

/// What the driver does.
struct load_settings {
  /// The nodes' app API endpoints (`demo.api_bind`:`demo.api_port`); at
  /// least one.
  std::vector<endpoint> nodes;
  /// Accounts `acct-0` .. `acct-{accounts-1}`; deposit n goes to account
  /// n mod accounts.
  uint32_t accounts = 16;
  /// Worker threads, each with one connection per node.
  uint32_t workers = 4;
  /// Deposits per second over all workers (deposit n is due at start +
  /// n / rate); 0: as fast as the workers get answers.
  double rate = 0;
  /// Per attempt: connect + request + answer.
  std::chrono::milliseconds request_timeout{2000};
  /// Attempts per deposit, on successive nodes (round-robin from the node
  /// deposit n starts at, n mod nodes), before it is logged `failed`.
  uint32_t max_attempts = 5;
  /// Pause before each retry (the failover needs a moment).
  std::chrono::milliseconds retry_delay{250};
  /// Deposit ids are `<deposit_prefix><n>`, n from 0.
  std::string deposit_prefix = "d";
  /// Stop after this many deposits (0: until `stop`).
  uint64_t max_deposits = 0;
};

/// The driver's counters at one moment. `sent` = `acked` + `failed` +
/// `in_flight`.
struct load_counters {
  /// Deposits started (first attempts).
  uint64_t sent = 0;
  uint64_t acked = 0;
  uint64_t failed = 0;
  uint64_t in_flight = 0;
  /// Requests including retries.
  uint64_t attempts = 0;
  /// Latency from `sent` to `acked` (retries included), over every acked
  /// deposit so far; within ~3% (a log-linear histogram's bucket bound).
  /// Zero before the first ack.
  std::chrono::microseconds p50{0};
  std::chrono::microseconds p90{0};
  std::chrono::microseconds p99{0};
  std::chrono::microseconds max{0};
  /// Acks in the last complete second (per second).
  uint64_t acks_last_second = 0;
};

/// The request a node gets for one deposit: `POST /deposit?account=ID&
/// deposit=DID&amount=A` (ids are `[A-Za-z0-9._-]`, no escaping needed).
std::string deposit_target(const std::string& account,
                           const std::string& deposit, int64_t amount);

/// The amount of deposit n: 1 + n mod 10.
int64_t deposit_amount(uint64_t n) noexcept;

/// A running load. A node's 200 is an ack (its JSON `seq`, if any, is
/// logged); any other status or an HTTP error is a failed attempt, retried
/// on the next node with the same deposit id after `retry_delay`.
///
/// The log is written through one buffered writer: lines reach the file
/// at least every 200 ms and by `stop` (a process killed before `stop`
/// loses at most the last 200 ms of lines).
///
/// Thread-safety: `counters` and `stop` may be called from any thread.
class load_driver {
public:
  /// Opens `log` (created or truncated) and starts the workers. Errors
  /// (runtime::errc::bad_config_value): no nodes, zero accounts or workers,
  /// a log that cannot be opened (path and the OS's reason).
  static runtime::expected<std::unique_ptr<load_driver>>
  start(load_settings settings, const std::filesystem::path& log);

  /// Stops (as `stop`).
  ~load_driver();

  load_driver(const load_driver&) = delete;
  load_driver& operator=(const load_driver&) = delete;

  load_counters counters() const;

  /// True once `max_deposits` deposits were acked or failed.
  bool finished() const;

  /// Lets each worker finish its current deposit (bounded by its attempts),
  /// joins them and flushes the log. Idempotent.
  void stop();

  struct impl;

private:
  explicit load_driver(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::demo::client
