#include "troupe/test/etcd_fixture.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/test/free_ports.hpp"
#include "troupe/test/server_process.hpp"

namespace troupe::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(std::string message) {
  throw std::runtime_error("etcd fixture: " + message);
}

// Removes `troupe-etcd-<pid>-*` directories of test processes that no
// longer exist (killed before their destructors ran): in /dev/shm they hold
// memory (etcd preallocates a 64 MB WAL file).
void remove_stale_dirs(const fs::path& base) {
  std::error_code ec;
  for (auto& entry : fs::directory_iterator{base, ec}) {
    auto name = entry.path().filename().string();
    constexpr std::string_view prefix = "troupe-etcd-";
    if (name.rfind(prefix, 0) != 0)
      continue;
    auto pid = std::atol(name.c_str() + prefix.size());
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
      fs::remove_all(entry.path(), ec);
  }
}

// A fresh directory, in /dev/shm when possible (etcd fsyncs its WAL),
// named after this process so that a later run can clean up after a crash.
std::string make_temp_dir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path();
  if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0)
    base = "/dev/shm";
  remove_stale_dirs(base);
  auto tmpl
    = (base / fmt::format("troupe-etcd-{}-XXXXXX", ::getpid())).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail(fmt::format("mkdtemp({}): {}", tmpl, std::strerror(errno)));
  return tmpl;
}

// The first key after every key starting with `prefix` (etcd's range_end
// for a prefix).
std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = prefix.back();
    if (static_cast<unsigned char>(last) != 0xff) {
      last = static_cast<char>(static_cast<unsigned char>(last) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0'); // every key
}

// etcd's gateway dials its own gRPC server with the server certificate as
// the client certificate, so with --client-cert-auth that certificate needs
// the clientAuth usage too (the test PKI's server certificate has only
// serverAuth). Returns (cert, key), signed by the test CA.
std::pair<std::string, std::string> make_etcd_server_cert(const test_pki& pki) {
  auto path = [&](std::string_view name) {
    return fmt::format("{}/{}", pki.dir, name);
  };
  std::ofstream{path("etcd_ext.cnf")}
    << "[etcd_ext]\n"
       "basicConstraints = critical, CA:FALSE\n"
       "keyUsage = critical, digitalSignature\n"
       "extendedKeyUsage = serverAuth, clientAuth\n"
       "subjectAltName = DNS:localhost, IP:127.0.0.1\n";
  auto log = path("etcd_openssl.log");
  auto run = [&](const std::string& args) {
    auto cmd = fmt::format("openssl {} >>'{}' 2>&1", args, log);
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream in{log};
      std::string text{std::istreambuf_iterator<char>{in}, {}};
      fail(fmt::format("`{}` failed: {}", cmd, text));
    }
  };
  auto key = path("etcd_server.key");
  auto csr = path("etcd_server.csr");
  auto pem = path("etcd_server.pem");
  run(fmt::format("req -new -config '{}' -newkey ec -pkeyopt "
                  "ec_paramgen_curve:prime256v1 -noenc -keyout '{}' -out '{}' "
                  "-subj '/CN=localhost'",
                  path("openssl.cnf"), key, csr));
  run(fmt::format("x509 -req -in '{}' -CA '{}' -CAkey '{}' -CAcreateserial "
                  "-CAserial '{}' -out '{}' -days 1 -extfile '{}' "
                  "-extensions etcd_ext",
                  csr, pki.ca_file, path("ca.key"), path("ca.srl"), pem,
                  path("etcd_ext.cnf")));
  return {pem, key};
}

std::string quote(std::string_view s) {
  return fmt::format("\"{}\"", lease::etcd::escape_for_message(s, 1000));
}

} // namespace

// -- member -------------------------------------------------------------------

class etcd_cluster::member {
public:
  std::string name;
  uint16_t client_port = 0;
  uint16_t peer_port = 0;
  uint16_t metrics_port = 0;
  std::string data_dir;
  std::string log_path;
  std::vector<std::string> args;
  server_process process;

  void spawn() {
    process.spawn(args, log_path);
  }
};

// -- cluster ------------------------------------------------------------------

etcd_cluster::etcd_cluster(size_t n, etcd_options opts) : opts_(opts) {
  if (n == 0)
    fail("a cluster needs at least one member");
  if (::access(etcd_binary, X_OK) != 0)
    fail(fmt::format("{} is missing or not executable: install the Debian "
                     "package etcd-server (scripts/install-deps)",
                     etcd_binary));
  dir_ = make_temp_dir();
  if (opts_.tls) {
    auto pki = make_test_pki();
    if (!pki)
      fail(pki.error().message);
    pki_ = std::move(*pki);
  }
  std::pair<std::string, std::string> server_cert;
  if (pki_)
    server_cert = make_etcd_server_cert(*pki_);
  engine_ = std::make_unique<runtime::http_engine>(client_tls());
  auto ports = free_ports(3 * n);
  std::string initial_cluster;
  for (size_t i = 0; i < n; ++i) {
    auto m = std::make_unique<member>();
    m->name = fmt::format("m{}", i);
    m->client_port = ports[3 * i];
    m->peer_port = ports[3 * i + 1];
    m->metrics_port = ports[3 * i + 2];
    m->data_dir = fmt::format("{}/{}.etcd", dir_, m->name);
    m->log_path = fmt::format("{}/{}.log", dir_, m->name);
    if (!initial_cluster.empty())
      initial_cluster += ',';
    initial_cluster
      += fmt::format("{}=http://127.0.0.1:{}", m->name, m->peer_port);
    members_.push_back(std::move(m));
  }
  for (size_t i = 0; i < n; ++i) {
    auto& m = *members_[i];
    auto client_url = endpoint(i);
    auto peer_url = fmt::format("http://127.0.0.1:{}", m.peer_port);
    m.args = {etcd_binary,
              "--name",
              m.name,
              "--data-dir",
              m.data_dir,
              "--listen-client-urls",
              client_url,
              "--advertise-client-urls",
              client_url,
              "--listen-peer-urls",
              peer_url,
              "--initial-advertise-peer-urls",
              peer_url,
              "--initial-cluster",
              initial_cluster,
              "--initial-cluster-state",
              "new",
              "--initial-cluster-token",
              fmt::format("troupe-test-{}", ::getpid()),
              "--listen-metrics-urls",
              fmt::format("http://127.0.0.1:{}", m.metrics_port),
              "--logger",
              "zap",
              "--log-outputs",
              "stderr"};
    if (opts_.auth_token_ttl > 0) {
      m.args.push_back("--auth-token-ttl");
      m.args.push_back(std::to_string(opts_.auth_token_ttl));
    }
    if (opts_.tls) {
      m.args.insert(m.args.end(), {"--cert-file", server_cert.first,
                                   "--key-file", server_cert.second});
      if (opts_.client_cert_auth)
        m.args.insert(m.args.end(), {"--trusted-ca-file", pki_->ca_file,
                                     "--client-cert-auth"});
    }
  }
  try {
    for (auto& m : members_)
      m->spawn();
    for (size_t i = 0; i < n; ++i)
      wait_healthy(i);
  } catch (...) {
    members_.clear(); // kills what started
    engine_.reset();
    if (std::getenv("KEEP_TEST_TMP") == nullptr) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
    throw;
  }
}

etcd_cluster::~etcd_cluster() {
  for (auto& m : members_)
    m->process.terminate(3s);
  engine_.reset();
  if (std::getenv("KEEP_TEST_TMP") == nullptr) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

size_t etcd_cluster::size() const noexcept {
  return members_.size();
}

std::string etcd_cluster::endpoint(size_t i) const {
  return fmt::format("{}://127.0.0.1:{}", opts_.tls ? "https" : "http",
                     members_.at(i)->client_port);
}

std::vector<std::string> etcd_cluster::endpoints() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < members_.size(); ++i)
    out.push_back(endpoint(i));
  return out;
}

pid_t etcd_cluster::pid(size_t i) const {
  return members_.at(i)->process.pid();
}

bool etcd_cluster::running(size_t i) const {
  return members_.at(i)->process.running();
}

void etcd_cluster::kill(size_t i) {
  members_.at(i)->process.kill();
}

void etcd_cluster::stop(size_t i) {
  members_.at(i)->process.terminate(3s);
}

void etcd_cluster::freeze(size_t i) {
  auto p = members_.at(i)->process.pid();
  if (p <= 0)
    return;
  ::kill(p, SIGSTOP);
  // SIGSTOP takes effect asynchronously: a thread already running may
  // still answer a request sent right after kill() returns. Wait until
  // the kernel reports the process stopped ("T" in /proc/<pid>/stat).
  auto stat = fmt::format("/proc/{}/stat", p);
  for (int attempt = 0; attempt < 2000; ++attempt) {
    std::ifstream in{stat};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    auto close = text.rfind(')');
    if (close != std::string::npos && close + 2 < text.size()
        && text[close + 2] == 'T')
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  fail(fmt::format("member {} (pid {}) did not stop within 2 s of SIGSTOP",
                   members_.at(i)->name, p));
}

void etcd_cluster::thaw(size_t i) {
  members_.at(i)->process.signal(SIGCONT);
}

void etcd_cluster::start(size_t i, bool healthy) {
  auto& m = *members_.at(i);
  if (m.process.pid() > 0)
    fail(fmt::format("member {} is still running (pid {})", m.name,
                     m.process.pid()));
  m.spawn();
  if (healthy)
    wait_healthy(i);
}

void etcd_cluster::restart(size_t i) {
  stop(i);
  start(i);
}

runtime::http_tls_settings etcd_cluster::client_tls() const {
  runtime::http_tls_settings tls;
  if (!pki_)
    return tls;
  tls.ca_file = pki_->ca_file;
  if (opts_.client_cert_auth) {
    tls.client_cert_file = pki_->client_cert;
    tls.client_key_file = pki_->client_key;
  }
  return tls;
}

const test_pki* etcd_cluster::pki() const noexcept {
  return pki_.get();
}

const std::string& etcd_cluster::dir() const noexcept {
  return dir_;
}

std::string etcd_cluster::log_tail(size_t i, size_t lines) const {
  return file_tail(members_.at(i)->log_path, lines);
}

namespace {

runtime::expected<runtime::http_response> exchange(runtime::http_engine& engine,
                                                   runtime::http_request req) {
  auto promise = std::make_shared<
    std::promise<runtime::expected<runtime::http_response>>>();
  auto future = promise->get_future();
  engine.start(std::move(req),
               [promise](auto r) { promise->set_value(std::move(r)); });
  return future.get(); // the engine always answers (request timeout)
}

} // namespace

bool etcd_cluster::healthy(size_t i) {
  runtime::http_request req;
  req.url = endpoint(i) + "/health";
  req.timeout = 1s;
  auto r = exchange(*engine_, std::move(req));
  return r && r->status == 200 && r->body.find("\"true\"") != std::string::npos;
}

void etcd_cluster::wait_healthy(size_t i) {
  auto& m = *members_.at(i);
  auto deadline = steady::now() + 10s;
  std::string last = "no answer yet";
  while (steady::now() < deadline) {
    if (!m.process.running())
      fail(fmt::format("etcd member {} exited during startup; log tail:\n{}",
                       m.name, log_tail(i)));
    runtime::http_request req;
    req.url = endpoint(i) + "/health";
    req.timeout = 1s;
    auto r = exchange(*engine_, std::move(req));
    if (r && r->status == 200 && r->body.find("\"true\"") != std::string::npos)
      return;
    last
      = r ? fmt::format("HTTP {} {}", r->status, r->body) : r.error().message;
    std::this_thread::sleep_for(50ms);
  }
  fail(fmt::format("etcd member {} at {} not healthy within 10s (last: {}); "
                   "log tail:\n{}",
                   m.name, endpoint(i), last, log_tail(i)));
}

std::string etcd_cluster::admin_token() {
  runtime::http_request req;
  req.method = "POST";
  req.url = endpoint(0) + std::string{lease::etcd::authenticate_path};
  req.body = lease::etcd::authenticate_request("root",
                                               runtime::secret{root_password_});
  req.timeout = 5s;
  auto r = exchange(*engine_, std::move(req));
  if (!r || r->status != 200)
    fail("authenticate as root failed: "
         + (r ? fmt::format("HTTP {} {}", r->status, r->body)
              : r.error().message));
  auto token = lease::etcd::parse_authenticate_response(r->body);
  if (!token)
    fail(token.error().message);
  return token->reveal();
}

runtime::http_response etcd_cluster::post(std::string_view path,
                                          std::string body, size_t i) {
  runtime::http_request req;
  req.method = "POST";
  req.url = endpoint(i) + std::string{path};
  req.body = std::move(body);
  req.timeout = 8s;
  if (!root_password_.empty())
    req.headers.push_back({"Authorization", admin_token()});
  auto r = exchange(*engine_, std::move(req));
  if (!r)
    fail(fmt::format("POST {}: {}", path, r.error().message));
  return std::move(*r);
}

std::string etcd_cluster::post_ok(std::string_view path, std::string body,
                                  size_t i) {
  auto shown = body;
  auto r = post(path, std::move(body), i);
  if (r.status != 200)
    fail(fmt::format("POST {} {} answered HTTP {}: {}", path, shown, r.status,
                     r.body));
  return std::move(r.body);
}

void etcd_cluster::enable_auth(const std::string& root_password,
                               const std::string& user,
                               const std::string& password,
                               const std::string& prefix) {
  using lease::etcd::base64_encode;
  post_ok("/v3/auth/user/add", fmt::format(R"({{"name":"root","password":{}}})",
                                           quote(root_password)));
  post_ok("/v3/auth/user/grant", R"({"user":"root","role":"root"})");
  post_ok("/v3/auth/role/add", R"({"name":"troupe"})");
  post_ok("/v3/auth/role/grant",
          fmt::format(R"({{"name":"troupe","perm":{{"permType":"READWRITE",)"
                      R"("key":"{}","range_end":"{}"}}}})",
                      base64_encode(prefix),
                      base64_encode(prefix_end(prefix))));
  post_ok("/v3/auth/user/add", fmt::format(R"({{"name":{},"password":{}}})",
                                           quote(user), quote(password)));
  post_ok("/v3/auth/user/grant",
          fmt::format(R"({{"user":{},"role":"troupe"}})", quote(user)));
  post_ok("/v3/auth/enable", "{}");
  root_password_ = root_password;
}

void etcd_cluster::disable_auth() {
  post_ok("/v3/auth/disable", "{}");
  root_password_.clear();
}

bool etcd_cluster::revoke(int64_t id) {
  return post(lease::etcd::revoke_path, lease::etcd::lease_id_request(id))
           .status
         == 200;
}

std::optional<etcd_cluster::key_state>
etcd_cluster::get(const std::string& key) {
  auto body = post_ok(lease::etcd::range_path, lease::etcd::range_request(key));
  auto kvs = lease::etcd::parse_range_response(body);
  if (!kvs)
    fail(kvs.error().message);
  if (kvs->empty())
    return std::nullopt;
  auto& kv = kvs->front();
  return key_state{kv.value, kv.create_revision, kv.lease};
}

} // namespace troupe::test
