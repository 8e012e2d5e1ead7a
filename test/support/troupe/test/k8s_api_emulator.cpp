// The request logic of the Lease API emulator: authentication, routing,
// authorization, limits, faults, recording, and the public API. The Beast
// server around it is k8s_api_server.cpp.

#include "troupe/test/k8s_api_emulator.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <strings.h>

#include "troupe/runtime/errc.hpp"
#include "troupe/test/k8s_api_emulator_impl.hpp"

namespace troupe::test {

namespace {

using steady = std::chrono::steady_clock;
using incoming = k8s_api_emulator::impl::incoming;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

const std::string* find_header(const std::vector<runtime::http_header>& hs,
                               std::string_view name) {
  for (const auto& h : hs)
    if (iequals(h.name, name))
      return &h.value;
  return nullptr;
}

// The media type of a Content-Type value: lower case, no parameters.
std::string media_type(const std::string* value) {
  if (!value)
    return {};
  std::string out;
  for (char c : value->substr(0, value->find(';')))
    if (c != ' ' && c != '\t')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A request path split as the apiserver's RequestInfo would see it.
struct route {
  enum class kind {
    unknown,
    health,
    collection,
    cluster_collection,
    item,
    pods,
  };
  kind what = kind::unknown;
  std::string ns;
  std::string name;
};

// `/api/v1/namespaces/{ns}/pods` (the core group's pod collection).
route parse_pods_route(std::string_view path) {
  constexpr std::string_view prefix = "/api/v1/namespaces/";
  constexpr std::string_view suffix = "/pods";
  if (path.size() <= prefix.size() + suffix.size()
      || path.substr(0, prefix.size()) != prefix
      || path.substr(path.size() - suffix.size()) != suffix)
    return {};
  auto ns
    = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  if (ns.find('/') != std::string_view::npos)
    return {};
  return {route::kind::pods, std::string{ns}, {}};
}

route parse_route(std::string_view target) {
  auto path = target.substr(0, target.find('?'));
  if (path == "/healthz" || path == "/livez" || path == "/readyz")
    return {route::kind::health, {}, {}};
  if (auto pods = parse_pods_route(path); pods.what != route::kind::unknown)
    return pods;
  constexpr std::string_view prefix = "/apis/coordination.k8s.io/v1/";
  if (path.substr(0, prefix.size()) != prefix)
    return {};
  std::vector<std::string> seg;
  for (size_t at = prefix.size(); at <= path.size();) {
    auto end = std::min(path.find('/', at), path.size());
    seg.emplace_back(path.substr(at, end - at));
    at = end + 1;
  }
  for (const auto& s : seg)
    if (s.empty())
      return {};
  if (seg.size() == 1 && seg[0] == "leases")
    return {route::kind::cluster_collection, {}, {}};
  if (seg.size() < 3 || seg.size() > 4 || seg[0] != "namespaces"
      || seg[2] != "leases")
    return {};
  if (seg.size() == 3)
    return {route::kind::collection, seg[1], {}};
  return {route::kind::item, seg[1], seg[3]};
}

std::optional<k8s_verb> verb_for(std::string_view method, route::kind what) {
  using k = route::kind;
  if (what == k::pods)
    return method == "GET" ? std::optional{k8s_verb::list} : std::nullopt;
  if (what == k::item) {
    if (method == "GET")
      return k8s_verb::get;
    if (method == "PUT")
      return k8s_verb::update;
    if (method == "PATCH")
      return k8s_verb::patch;
    if (method == "DELETE")
      return k8s_verb::delete_;
  } else if (method == "GET") {
    return k8s_verb::list;
  } else if (method == "POST" && what == k::collection) {
    return k8s_verb::create;
  }
  return std::nullopt;
}

bool matches(const k8s_fault& f, const incoming& req) {
  if (!f.method.empty() && f.method != req.method)
    return false;
  if (f.path.empty())
    return true;
  std::string_view path = req.target;
  path = path.substr(0, path.find('?'));
  if (f.path.back() == '*')
    return path.substr(0, f.path.size() - 1)
           == std::string_view{f.path}.substr(0, f.path.size() - 1);
  return path == f.path;
}

k8s_reply text_reply(uint16_t status, std::string body) {
  k8s_reply r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = "text/plain; charset=utf-8";
  return r;
}

} // namespace

const char* to_string(k8s_verb v) noexcept {
  switch (v) {
    case k8s_verb::get:
      return "get";
    case k8s_verb::list:
      return "list";
    case k8s_verb::create:
      return "create";
    case k8s_verb::update:
      return "update";
    case k8s_verb::patch:
      return "patch";
    case k8s_verb::delete_:
      return "delete";
  }
  return "?";
}

// -- k8s_fault --------------------------------------------------------------

namespace {

k8s_fault make_fault(k8s_fault::action what) {
  k8s_fault f;
  f.what = what;
  return f;
}

} // namespace

k8s_fault k8s_fault::delay_by(std::chrono::milliseconds d) {
  return make_fault(action::none).after(d);
}

k8s_fault k8s_fault::answer_status(uint16_t status, std::string message) {
  auto f = make_fault(action::answer);
  f.status = status;
  f.message = std::move(message);
  return f;
}

k8s_fault k8s_fault::too_many_requests(std::chrono::seconds retry_after) {
  auto f = answer_status(429);
  f.retry_after = retry_after;
  return f;
}

k8s_fault k8s_fault::drop_connection() {
  return make_fault(action::drop);
}

k8s_fault k8s_fault::apply_then_drop() {
  return make_fault(action::apply_then_drop);
}

k8s_fault k8s_fault::hang() {
  return make_fault(action::hang);
}

k8s_fault k8s_fault::on(std::string m, std::string p) const {
  auto f = *this;
  f.method = std::move(m);
  f.path = std::move(p);
  return f;
}

k8s_fault k8s_fault::times(uint32_t n) const {
  auto f = *this;
  f.remaining = n;
  return f;
}

k8s_fault k8s_fault::after(std::chrono::milliseconds d) const {
  auto f = *this;
  f.delay += d;
  return f;
}

const std::string* k8s_recorded_request::header(std::string_view name) const {
  return find_header(headers, name);
}

// -- request logic ----------------------------------------------------------

k8s_api_emulator::impl::plan
k8s_api_emulator::impl::begin(const incoming& req) {
  std::lock_guard<std::mutex> guard{mtx};
  plan p;
  p.seq = first_seq + recorded.size();
  ++counters.requests;
  k8s_recorded_request rec;
  rec.method = req.method;
  rec.target = req.target;
  rec.headers = req.headers;
  rec.body = req.body;
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    auto& f = it->second;
    if (!matches(f, req) || (f.remaining && *f.remaining == 0))
      continue;
    p.faulted = true;
    p.fault = f;
    if (f.remaining && --*f.remaining == 0)
      faults.erase(it);
    ++counters.faults_fired;
    rec.faulted = true;
    rec.fault = p.fault.what;
    break;
  }
  recorded.push_back(std::move(rec));
  while (recorded.size() > std::max<size_t>(1, opts.max_recorded_requests)) {
    recorded.pop_front();
    ++first_seq;
  }
  return p;
}

void k8s_api_emulator::impl::record_status(uint64_t seq, uint16_t status) {
  ++counters.by_status[status];
  if (seq >= first_seq && seq - first_seq < recorded.size())
    recorded[seq - first_seq].status = status;
}

k8s_reply k8s_api_emulator::impl::serve(const incoming& req, uint64_t seq,
                                        bool answered) {
  std::lock_guard<std::mutex> guard{mtx};
  auto reply = serve_locked(req);
  if (answered)
    record_status(seq, reply.status);
  counters.writes = store.writes();
  return reply;
}

k8s_reply k8s_api_emulator::impl::fault_reply(const incoming& req,
                                              const k8s_fault& fault,
                                              uint64_t seq) {
  auto r = parse_route(req.target);
  auto retry = static_cast<int32_t>(fault.retry_after.count());
  auto status = k8s_server_error(fault.status, r.name, fault.message, retry);
  auto reply = fault.plain_text
                 ? text_reply(fault.status, status.message + "\n")
                 : to_reply(status);
  if (retry > 0)
    reply.headers.push_back({"Retry-After", std::to_string(retry)});
  std::lock_guard<std::mutex> guard{mtx};
  record_status(seq, reply.status);
  return reply;
}

void k8s_api_emulator::impl::park(std::shared_ptr<k8s_hung_request> req) {
  std::lock_guard<std::mutex> guard{mtx};
  hung.push_back(std::move(req));
}

k8s_reply k8s_api_emulator::impl::serve_locked(const incoming& req) {
  auto r = parse_route(req.target);
  if (r.what == route::kind::health)
    return text_reply(200, "ok");
  // Authentication: "Bearer <token>"; anything else is no credentials.
  bool anonymous = false;
  if (!token.empty()) {
    auto* auth = find_header(req.headers, "authorization");
    std::string_view presented;
    if (auth && auth->size() > 7 && iequals(auth->substr(0, 7), "bearer "))
      presented = std::string_view{*auth}.substr(7);
    bool in_grace = !old_token.empty() && steady::now() < old_token_until
                    && presented == old_token;
    if (presented.empty() && opts.anonymous_auth)
      anonymous = true;
    else if (presented != token && !in_grace)
      return to_reply(k8s_unauthorized());
  }
  if (r.what == route::kind::unknown)
    return to_reply(k8s_path_not_found());
  auto verb = verb_for(req.method, r.what);
  if (!verb)
    return to_reply(k8s_method_not_allowed());
  auto resource
    = r.what == route::kind::pods ? k8s_resource::pods : k8s_resource::leases;
  if (anonymous || denied.count({resource, *verb}) > 0) {
    auto who = anonymous ? std::string{"system:anonymous"} : user();
    if (resource == k8s_resource::pods)
      return to_reply(
        k8s_forbidden_resource(who, to_string(*verb), "pods", "", r.ns, {}));
    return to_reply(k8s_forbidden(who, to_string(*verb), r.ns, r.name));
  }
  if (resource == k8s_resource::pods) {
    auto q = req.target.find('?');
    auto query = q == std::string::npos
                   ? std::string_view{}
                   : std::string_view{req.target}.substr(q + 1);
    return pods.list(r.ns, query, store.resource_version());
  }
  return serve_leases(req, *verb, r.ns, r.name);
}

k8s_reply k8s_api_emulator::impl::serve_leases(const incoming& req,
                                               k8s_verb verb,
                                               std::string_view ns,
                                               std::string_view name) {
  if (req.truncated || req.body.size() > opts.max_body_bytes)
    return to_reply(k8s_entity_too_large(opts.max_body_bytes));
  auto type = media_type(find_header(req.headers, "content-type"));
  bool has_body = req.method == "POST" || req.method == "PUT"
                  || (req.method == "DELETE" && !req.body.empty());
  if (has_body && !type.empty() && type != "application/json")
    return to_reply(
      k8s_unsupported_media_type({"application/json", "application/yaml",
                                  "application/vnd.kubernetes.protobuf"}));
  if (req.method == "PATCH" && type != "application/merge-patch+json"
      && type != "application/strategic-merge-patch+json")
    return to_reply(k8s_unsupported_media_type(
      {"application/json-patch+json", "application/merge-patch+json",
       "application/strategic-merge-patch+json",
       "application/apply-patch+yaml"}));
  k8s_write_context ctx;
  ctx.now = now_rfc3339();
  ctx.new_uid = new_uid();
  if (denied.count({k8s_resource::leases, k8s_verb::create}) > 0)
    ctx.create_denied = k8s_forbidden_create_on_update(name);
  switch (verb) {
    case k8s_verb::get:
      return store.get(ns, name);
    case k8s_verb::list:
      return store.list(ns);
    case k8s_verb::create:
      return store.create(ns, req.body, ctx);
    case k8s_verb::update:
      return store.replace(ns, name, req.body, ctx);
    case k8s_verb::patch:
      return store.merge_patch(ns, name, req.body, ctx);
    case k8s_verb::delete_:
      return store.remove(ns, name, req.body);
  }
  return to_reply(k8s_method_not_allowed());
}

std::string k8s_api_emulator::impl::new_uid() {
  // A random (version 4) UUID, as the apiserver's uuid.NewUUID gives.
  uint64_t hi = rng();
  uint64_t lo = rng();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32,
                     (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFULL);
}

std::string k8s_api_emulator::impl::now_rfc3339() const {
  auto now = std::chrono::system_clock::now() + clock_offset;
  auto t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

std::string k8s_api_emulator::impl::user() const {
  return fmt::format("system:serviceaccount:{}:{}",
                     opts.service_account_namespace, opts.service_account_name);
}

// -- k8s_api_emulator -------------------------------------------------------

k8s_api_emulator::k8s_api_emulator(k8s_api_emulator_options opts) {
  try {
    impl_ = std::make_shared<impl>(std::move(opts));
    impl_->start_server();
  } catch (const std::exception& e) {
    throw std::runtime_error(
      fmt::format("k8s_api_emulator: setup failed: {}", e.what()));
  }
}

k8s_api_emulator::~k8s_api_emulator() {
  impl_->stop_server();
}

const k8s_api_emulator_options& k8s_api_emulator::options() const noexcept {
  return impl_->opts;
}

uint16_t k8s_api_emulator::port() const noexcept {
  return impl_->port;
}

std::string k8s_api_emulator::base_url() const {
  return fmt::format("{}://{}:{}", impl_->opts.tls ? "https" : "http",
                     impl_->opts.host, impl_->port);
}

std::string k8s_api_emulator::leases_url(std::string_view ns) const {
  return fmt::format("{}/apis/{}/namespaces/{}/leases", base_url(),
                     k8s_lease_api_version, ns);
}

std::string k8s_api_emulator::lease_url(std::string_view ns,
                                        std::string_view name) const {
  return fmt::format("{}/{}", leases_url(ns), name);
}

std::string k8s_api_emulator::user() const {
  return impl_->user();
}

void k8s_api_emulator::set_token(std::string token,
                                 std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  impl_->old_token = std::exchange(impl_->token, std::move(token));
  impl_->old_token_until = steady::now() + grace;
}

void k8s_api_emulator::deny(k8s_verb verb, bool denied) {
  deny(k8s_resource::leases, verb, denied);
}

void k8s_api_emulator::deny(k8s_resource resource, k8s_verb verb, bool denied) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  if (denied)
    impl_->denied.insert({resource, verb});
  else
    impl_->denied.erase({resource, verb});
}

void k8s_api_emulator::allow_all() {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  impl_->denied.clear();
}

uint64_t k8s_api_emulator::add_fault(k8s_fault fault) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  auto id = impl_->next_fault_id++;
  impl_->faults.emplace_back(id, std::move(fault));
  return id;
}

void k8s_api_emulator::clear_fault(uint64_t id) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  std::erase_if(impl_->faults, [id](auto& f) { return f.first == id; });
}

void k8s_api_emulator::clear_faults() {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  impl_->faults.clear();
}

void k8s_api_emulator::release_hangs() {
  std::vector<std::shared_ptr<k8s_hung_request>> parked;
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    parked.swap(impl_->hung);
  }
  for (auto& req : parked)
    req->resume();
}

size_t k8s_api_emulator::hung_requests() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->hung.size();
}

void k8s_api_emulator::set_clock_offset(std::chrono::milliseconds offset) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  impl_->clock_offset = offset;
}

std::optional<k8s_lease> k8s_api_emulator::lease(std::string_view ns,
                                                 std::string_view name) const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  if (auto* found = impl_->store.find(ns, name))
    return *found;
  return std::nullopt;
}

std::vector<k8s_lease> k8s_api_emulator::leases() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->store.all();
}

runtime::expected<k8s_lease>
k8s_api_emulator::put_lease(std::string_view ns, std::string_view name,
                            std::string_view spec_json) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  k8s_write_context ctx;
  ctx.now = impl_->now_rfc3339();
  ctx.new_uid = impl_->new_uid();
  auto out = impl_->store.put(ns, name, spec_json, ctx);
  impl_->counters.writes = impl_->store.writes();
  if (auto* err = std::get_if<k8s_status>(&out))
    return runtime::make_error(
      runtime::errc::bad_config_value,
      fmt::format("put_lease {}/{}: {}", ns, name, err->message));
  return std::get<k8s_lease>(std::move(out));
}

bool k8s_api_emulator::delete_lease(std::string_view ns,
                                    std::string_view name) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  auto erased = impl_->store.erase(ns, name);
  impl_->counters.writes = impl_->store.writes();
  return erased;
}

k8s_pod k8s_api_emulator::put_pod(k8s_pod pod) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  auto rv = impl_->store.next_revision();
  auto out = impl_->pods.put(std::move(pod), std::move(rv), impl_->new_uid(),
                             impl_->now_rfc3339());
  impl_->counters.writes = impl_->store.writes();
  return out;
}

bool k8s_api_emulator::delete_pod(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  if (!impl_->pods.erase(ns, name))
    return false;
  impl_->store.next_revision();
  impl_->counters.writes = impl_->store.writes();
  return true;
}

std::optional<k8s_pod> k8s_api_emulator::pod(std::string_view ns,
                                             std::string_view name) const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  if (auto* found = impl_->pods.find(ns, name))
    return *found;
  return std::nullopt;
}

std::string k8s_api_emulator::pods_url(std::string_view ns) const {
  return fmt::format("{}/api/v1/namespaces/{}/pods", base_url(), ns);
}

std::string k8s_api_emulator::resource_version() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->store.resource_version();
}

std::vector<k8s_recorded_request> k8s_api_emulator::requests() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return {impl_->recorded.begin(), impl_->recorded.end()};
}

void k8s_api_emulator::clear_requests() {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  impl_->first_seq += impl_->recorded.size();
  impl_->recorded.clear();
}

k8s_emulator_counters k8s_api_emulator::counters() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->counters;
}

runtime::expected<std::unique_ptr<k8s_api_emulator>>
make_k8s_api_emulator(k8s_api_emulator_options opts) {
  try {
    return std::make_unique<k8s_api_emulator>(std::move(opts));
  } catch (const std::exception& e) {
    return runtime::make_error(runtime::errc::bad_config_value, e.what());
  }
}

} // namespace troupe::test
