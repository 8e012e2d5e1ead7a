#pragma once

// Internal to the Lease API emulator (k8s_api_emulator.cpp, the request
// logic, and k8s_api_server.cpp, the Beast server): not for tests.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "troupe/test/k8s_api_emulator.hpp"

namespace troupe::test {

/// A request parked by a `hang` fault; `resume` serves and answers it.
class k8s_hung_request {
public:
  virtual ~k8s_hung_request() = default;
  virtual void resume() = 0;
};

class k8s_api_emulator::impl {
public:
  /// A request as read from the wire.
  struct incoming {
    std::string method;
    std::string target;
    std::vector<runtime::http_header> headers;
    std::string body;
    /// The body exceeded the read limit and was not read completely.
    bool truncated = false;
  };

  /// What to do with a request: its record number and the fault (if any).
  struct plan {
    uint64_t seq = 0;
    bool faulted = false;
    k8s_fault fault;
  };

  explicit impl(k8s_api_emulator_options opts);
  ~impl();

  // -- request logic (k8s_api_emulator.cpp); thread-safe ---------------------

  /// Records the request and picks the fault that applies to it.
  plan begin(const incoming& req);

  /// Serves the request: authentication, routing, authorization, limits,
  /// then the store. Records the status under `seq` when `answered` (false:
  /// the answer is thrown away, apply_then_drop).
  k8s_reply serve(const incoming& req, uint64_t seq, bool answered = true);

  /// The answer of an `answer` fault.
  k8s_reply fault_reply(const incoming& req, const k8s_fault& fault,
                        uint64_t seq);

  /// Parks a hung request until `release_hangs` or the end.
  void park(std::shared_ptr<k8s_hung_request> req);

  // -- connection bookkeeping (k8s_api_server.cpp) ---------------------------

  void opened();
  void closed();
  void tls_failed();

  // Declared first: sessions touch these while `ioc` destroys them.
  mutable std::mutex mtx;
  k8s_api_emulator_options opts;
  k8s_lease_store store;
  k8s_pod_store pods;
  std::string token;
  std::string old_token;
  std::chrono::steady_clock::time_point old_token_until;
  std::set<std::pair<k8s_resource, k8s_verb>> denied;
  std::vector<std::pair<uint64_t, k8s_fault>> faults;
  uint64_t next_fault_id = 1;
  std::chrono::milliseconds clock_offset{0};
  std::deque<k8s_recorded_request> recorded;
  uint64_t first_seq = 0; // sequence number of recorded.front()
  k8s_emulator_counters counters;
  std::mt19937_64 rng{std::random_device{}()};
  std::vector<std::shared_ptr<k8s_hung_request>> hung;

  // -- server (k8s_api_server.cpp) -------------------------------------------

  void start_server();
  void stop_server();
  void accept();

  boost::asio::ssl::context ssl_ctx;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor;
  uint16_t port = 0;
  std::vector<std::thread> threads;

  // Helpers, called with `mtx` held.
  std::string user() const;
  std::string new_uid();
  std::string now_rfc3339() const;

private:
  k8s_reply serve_locked(const incoming& req);
  k8s_reply serve_leases(const incoming& req, k8s_verb verb,
                         std::string_view ns, std::string_view name);
  void record_status(uint64_t seq, uint16_t status);
};

} // namespace troupe::test
