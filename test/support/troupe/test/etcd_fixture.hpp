#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/http_types.hpp"
#include "troupe/test/http_test_server.hpp"

/// @file
/// Real etcd servers for integration tests: Debian's `/usr/bin/etcd`
/// (package etcd-server, installed by scripts/install-deps) on 127.0.0.1,
/// free ports, a fresh data directory, stopped and removed afterwards.

namespace troupe::test {

/// Where the fixture looks for etcd.
inline constexpr const char* etcd_binary = "/usr/bin/etcd";

/// How to run etcd (defaults: plain HTTP, no auth, etcd's defaults).
struct etcd_options {
  /// Serve clients over https with the test PKI's server certificate
  /// (SAN 127.0.0.1 and localhost).
  bool tls = false;
  /// With `tls`: require a client certificate signed by the test CA
  /// (`--client-cert-auth`).
  bool client_cert_auth = false;
  /// `--auth-token-ttl` in seconds (0 = etcd's default, 300). Simple
  /// tokens slide: each use extends them.
  int auth_token_ttl = 0;
};

/// A cluster of 1..n etcd members on 127.0.0.1, each with free client,
/// peer and metrics ports and a data directory under one fresh temporary
/// directory (in /dev/shm when it is writable: no fsync stalls on a busy
/// disk). The constructor starts every member and waits until each answers
/// `GET /health` with 200 (deadline 10 s; etcd is ready in < 1 s).
///
/// Processes: started with fork/exec, each with PR_SET_PDEATHSIG = SIGKILL,
/// so a crashed or killed test binary leaves no etcd behind; construct and
/// restart members from the thread that lives longest (the test's main
/// thread), because the death signal follows the thread that forked. Only
/// the PIDs started here are ever signalled. The destructor stops every
/// member (SIGTERM, SIGKILL after 3 s) and removes the directory (kept when
/// KEEP_TEST_TMP is set, for post-mortems; each member's log is
/// `<dir>/<member>.log`). The directory is named `troupe-etcd-<pid>-*`;
/// the next fixture removes those of processes that no longer exist (a
/// test binary killed before its destructors ran).
///
/// Errors (test setup, not code under test) throw std::runtime_error whose
/// message names the command, the member and the tail of its log; a
/// missing `/usr/bin/etcd` throws too (in CI the test must fail, not skip).
///
/// Thread-safety: not thread-safe; drive it from the test's thread.
class etcd_cluster {
public:
  explicit etcd_cluster(size_t members = 3, etcd_options opts = {});
  ~etcd_cluster();

  etcd_cluster(const etcd_cluster&) = delete;
  etcd_cluster& operator=(const etcd_cluster&) = delete;

  size_t size() const noexcept;

  /// `http://127.0.0.1:<client port>` of `member` (https:// with TLS).
  std::string endpoint(size_t member = 0) const;

  /// Every member's endpoint.
  std::vector<std::string> endpoints() const;

  /// The PID of `member`, or -1 when it is not running.
  pid_t pid(size_t member = 0) const;

  bool running(size_t member = 0) const;

  /// True if `member` answers `GET /health` with 200 and `"true"` within
  /// 1 s (503 without quorum).
  bool healthy(size_t member = 0);

  /// SIGKILL, then reaps it.
  void kill(size_t member = 0);

  /// SIGTERM, SIGKILL after 3 s, then reaps it.
  void stop(size_t member = 0);

  /// SIGSTOP: the member keeps its sockets (the kernel still accepts TCP
  /// connections) but answers nothing until thaw().
  void freeze(size_t member = 0);

  /// SIGCONT after freeze().
  void thaw(size_t member = 0);

  /// Starts a stopped member again on the same ports and data directory
  /// and waits until it answers /health with 200 (when `wait_healthy`; a
  /// lone member of a cluster without quorum answers 503).
  void start(size_t member = 0, bool wait_healthy = true);

  /// stop() + start().
  void restart(size_t member = 0);

  /// TLS settings a client needs for this cluster (CA, and the test
  /// client certificate with `client_cert_auth`); empty without TLS.
  runtime::http_tls_settings client_tls() const;

  /// The test PKI (only with `tls`).
  const test_pki* pki() const noexcept;

  /// One JSON RPC to `member`: `POST <endpoint><path>` with `body`, as
  /// root once enable_auth() ran. Throws when there is no HTTP answer.
  runtime::http_response post(std::string_view path, std::string body,
                              size_t member = 0);

  /// As `post`, and throws unless the status is 200.
  std::string post_ok(std::string_view path, std::string body,
                      size_t member = 0);

  /// Enables authentication via the JSON API: user root (`root_password`)
  /// with role root; role `troupe` with READWRITE on the keys starting
  /// with `prefix`; `user` (`password`) with role troupe; auth/enable.
  void enable_auth(const std::string& root_password, const std::string& user,
                   const std::string& password, const std::string& prefix);

  /// Disables authentication again (as root); later fixture calls send no
  /// token.
  void disable_auth();

  /// Revokes lease `id` (as root after enable_auth); true on 200.
  bool revoke(int64_t id);

  /// The value and lease of `key` (linearizable read), if it exists.
  struct key_state {
    std::string value;
    int64_t create_revision = 0;
    int64_t lease = 0;
  };
  std::optional<key_state> get(const std::string& key);

  /// The temporary directory of the data directories and logs.
  const std::string& dir() const noexcept;

  /// The last lines of `member`'s log (for failure messages).
  std::string log_tail(size_t member = 0, size_t lines = 20) const;

  class member;

private:
  void wait_healthy(size_t member);
  std::string admin_token();

  etcd_options opts_;
  std::string dir_;
  std::unique_ptr<test_pki> pki_;
  std::vector<std::unique_ptr<member>> members_;
  std::unique_ptr<runtime::http_engine> engine_;
  std::string root_password_;
};

/// One etcd server: an etcd_cluster of one member.
class etcd_server : public etcd_cluster {
public:
  explicit etcd_server(etcd_options opts = {}) : etcd_cluster(1, opts) {}
};

} // namespace troupe::test
