#include "troupe/runtime/kubernetes_api.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/monotonic_clock.hpp"

namespace troupe::runtime {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
    ++i;
  return s.substr(i);
}

error invalid(std::string msg) {
  return make_error(errc::bad_config_value, std::move(msg));
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

} // namespace

expected<std::string> in_cluster_api_server(const env_reader& getenv,
                                            std::string_view key) {
  auto host = getenv("KUBERNETES_SERVICE_HOST");
  auto port = getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0')
    return invalid(fmt::format("{} is empty and KUBERNETES_SERVICE_HOST / "
                               "KUBERNETES_SERVICE_PORT are not set (not "
                               "running in a pod?): set {}",
                               key, key));
  std::string_view h{host};
  return h.find(':') != std::string_view::npos
           ? fmt::format("https://[{}]:{}", h, port)
           : fmt::format("https://{}:{}", h, port);
}

std::string namespace_from_file(const std::string& namespace_file) {
  std::ifstream in{namespace_file};
  std::string line;
  if (in && std::getline(in, line) && !line.empty()) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (!line.empty())
      return line;
  }
  return "default";
}

error validate_kubernetes_namespace(std::string_view name) {
  auto fail = [&](std::string_view why) {
    return invalid(fmt::format("namespace \"{}\" is not a DNS-1123 label: {}",
                               name.substr(0, 80), why));
  };
  if (name.empty() || name.size() > 63)
    return fail("it must have 1 to 63 characters");
  for (char c : name)
    if (!is_lower_alnum(c) && c != '-')
      return fail("only lowercase letters, digits and '-' are allowed");
  if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back()))
    return fail("it must start and end with a lowercase letter or digit");
  return {};
}

std::string media_type_of(const http_response& resp) {
  auto h = resp.header("Content-Type");
  if (h == nullptr)
    return {};
  auto out = trim(h->substr(0, h->find(';')));
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return out;
}

// -- kubernetes_api_client ----------------------------------------------------

kubernetes_api_client::kubernetes_api_client(kubernetes_api_options opts)
  : opts_(std::move(opts)), engine_(std::make_shared<http_engine>(
                              http_tls_settings{opts_.ca_file, {}, {}})) {}

kubernetes_api_client::~kubernetes_api_client() {
  engine_->shutdown();
}

expected<std::shared_ptr<kubernetes_api_client>>
kubernetes_api_client::make(kubernetes_api_options opts) {
  // What an error calls an option: its key, or its name.
  auto name = [&](std::string_view option, std::string_view plain) {
    return opts.config_prefix.empty()
             ? std::string{plain}
             : fmt::format("{}{}", opts.config_prefix, option);
  };
  auto server = name("api_server", "Kubernetes API server");
  auto url = parse_url(opts.api_server);
  if (!url)
    return invalid(fmt::format("{}: {}", server, url.error().message));
  if (url->target != "/")
    return invalid(
      fmt::format("{} {} must not have a path", server, url->to_string()));
  if (!url->is_tls() && !opts.allow_insecure_http)
    return invalid(fmt::format(
      "{} {} uses http://: the token would travel unencrypted; use https:// "
      "or set {} (for kubectl proxy on loopback only)",
      server, url->to_string(),
      name("allow_insecure_http", "allow_insecure_http")));
  if (!url->is_tls())
    logger{opts.log_component}.warning(
      "INSECURE: talking to the Kubernetes API at {} over plain HTTP; only "
      "acceptable for kubectl proxy on loopback",
      url->to_string());
  opts.api_server = fmt::format("{}://{}", url->scheme, url->authority());
  if (!url->is_tls())
    opts.ca_file.clear(); // no TLS: the CA file is not read (nor missed)
  if (opts.request_timeout <= timespan{0})
    return invalid(
      fmt::format("{} must be positive",
                  name("request_timeout", "Kubernetes request_timeout")));
  if (opts.token_refresh_interval <= timespan{0})
    return invalid(fmt::format(
      "{} must be positive",
      name("token_refresh_interval", "Kubernetes token_refresh_interval")));
  if (!opts.token_file.empty() && !std::ifstream{opts.token_file})
    return invalid(fmt::format("{} {}: cannot read: {}",
                               name("token_file", "Kubernetes token_file"),
                               opts.token_file, std::strerror(errno)));
  if (!opts.clock)
    opts.clock = std::make_shared<precise_monotonic_clock>();
  auto ca_file = opts.ca_file;
  auto ca = name("ca_file", "Kubernetes ca_file");
  std::shared_ptr<kubernetes_api_client> ptr{
    new kubernetes_api_client(std::move(opts))};
  if (url->is_tls() && ptr->engine_->tls_setup_error())
    return invalid(fmt::format("{} {}: {}", ca,
                               ca_file.empty() ? "(system store)" : ca_file,
                               ptr->engine_->tls_setup_error().message));
  return ptr;
}

void kubernetes_api_client::shutdown() {
  engine_->shutdown();
}

std::string kubernetes_api_client::token_source() const {
  return opts_.token_file.empty()
           ? std::string{" (no token file is configured)"}
           : fmt::format(" file {}", opts_.token_file);
}

// The bearer token, re-read when older than token_refresh_interval or when
// `force` (after a 401). Empty when no token file is configured.
expected<std::string> kubernetes_api_client::token(bool force) {
  if (opts_.token_file.empty())
    return std::string{};
  std::lock_guard guard{mtx_};
  auto t = opts_.clock->now();
  if (!force && token_read_at_
      && t - *token_read_at_ < opts_.token_refresh_interval && !token_.empty())
    return token_;
  std::ifstream in{opts_.token_file, std::ios::binary};
  std::stringstream buf;
  if (in)
    buf << in.rdbuf();
  if (!in || in.bad())
    return make_error(errc::credentials_unreadable,
                      fmt::format("cannot read the Kubernetes token file {}",
                                  opts_.token_file));
  auto text = trim(buf.str());
  if (text.empty())
    return make_error(
      errc::credentials_unreadable,
      fmt::format("the Kubernetes token file {} is empty", opts_.token_file));
  if (text.find_first_of("\r\n") != std::string::npos || text.size() > 16384)
    return make_error(errc::credentials_unreadable,
                      fmt::format("the Kubernetes token file {} does not "
                                  "hold one token",
                                  opts_.token_file));
  token_ = std::move(text);
  token_read_at_ = t;
  return token_;
}

// One request across its attempts.
struct kubernetes_api_client::exchange_state {
  std::string method;
  std::string path;
  std::string body;
  uint64_t max_response_bytes = 0;
  callback done;
  /// The caller's bound on both attempts (steady clock: the engine's
  /// deadlines are real time, whatever `opts_.clock` is).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

void kubernetes_api_client::request(std::string method, std::string path,
                                    std::string body,
                                    uint64_t max_response_bytes, callback done,
                                    timespan timeout) {
  auto st = std::make_shared<exchange_state>();
  st->method = std::move(method);
  st->path = std::move(path);
  st->body = std::move(body);
  st->max_response_bytes = max_response_bytes;
  st->done = std::move(done);
  if (timeout > timespan{0})
    st->deadline = std::chrono::steady_clock::now() + timeout;
  exchange(std::move(st), false);
}

void kubernetes_api_client::exchange(std::shared_ptr<exchange_state> st,
                                     bool after_401) {
  auto timeout = opts_.request_timeout;
  if (st->deadline) {
    auto left = std::chrono::duration_cast<timespan>(
      *st->deadline - std::chrono::steady_clock::now());
    if (left <= timespan{0}) {
      st->done(make_error(errc::http_timeout,
                          fmt::format("{} {}{}: no time left for the retry "
                                      "after a 401",
                                      st->method, opts_.api_server, st->path)));
      return;
    }
    timeout = std::min(timeout, left);
  }
  auto tok = token(after_401);
  if (!tok) {
    st->done(tok.error());
    return;
  }
  http_request req;
  req.method = st->method;
  req.url = opts_.api_server + st->path;
  req.timeout = timeout;
  req.max_response_bytes = st->max_response_bytes;
  req.headers.push_back({"Accept", "application/json"});
  if (!tok->empty())
    req.headers.push_back({"Authorization", "Bearer " + *tok});
  if (!st->body.empty())
    req.headers.push_back({"Content-Type", "application/json"});
  req.body = st->body;
  auto self = shared_from_this();
  engine_->start(std::move(req), [self, st, after_401](auto res) {
    if (res && res->status == 401 && !after_401
        && !self->opts_.token_file.empty()) {
      logger{self->opts_.log_component}.info(
        "Kubernetes API answered 401 to {} {}: re-reading the token file {} "
        "and retrying once",
        st->method, st->path, self->opts_.token_file);
      self->exchange(st, true);
      return;
    }
    st->done(std::move(res));
  });
}

} // namespace troupe::runtime
