#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/http_connection.hpp"
#include "client/load_counters.hpp"
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
  /// deposit n starts at, n mod nodes, skipping nodes that refuse
  /// connections: node_choice.hpp), before it is logged `failed`.
  uint32_t max_attempts = 5;
  /// Pause before each retry (the failover needs a moment); none after a
  /// refused connection when another node is not refusing.
  std::chrono::milliseconds retry_delay{250};
  /// How long a node that refused a connection is skipped (then probed
  /// again).
  std::chrono::milliseconds refusing_pause{1000};
  /// Deposit ids are `<deposit_prefix><n>`, n from 0.
  std::string deposit_prefix = "d";
  /// Stop after this many deposits (0: until `stop`).
  uint64_t max_deposits = 0;
};

/// The request a node gets for one deposit: `POST /deposit?account=ID&
/// deposit=DID&amount=A` (ids are `[A-Za-z0-9._-]`, no escaping needed).
std::string deposit_target(const std::string& account,
                           const std::string& deposit, int64_t amount);

/// The amount of deposit n: 1 + n mod 10.
int64_t deposit_amount(uint64_t n) noexcept;

/// A running load. A node's 200 is an ack (its JSON `seq`, if any, is
/// logged); any other status or an HTTP error is a failed attempt, retried
/// on the next node with the same deposit id after `retry_delay`. A refused
/// connection (a dead node) is retried on the next node that does not
/// refuse at once, and every worker skips that node for `refusing_pause`.
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

  /// Lets each worker finish its current attempt, logs a deposit that
  /// waited for a retry `unfinished`, joins the workers and flushes the
  /// log. Idempotent.
  void stop();

  struct impl;

private:
  explicit load_driver(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::demo::client
