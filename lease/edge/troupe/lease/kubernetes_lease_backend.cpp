#include "troupe/lease/kubernetes_lease_backend.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/kubernetes_lease_object.hpp"
#include "troupe/runtime/kubernetes_api.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::lease {

using runtime::http_request;
using runtime::http_response;
using runtime::make_error;
using runtime::timespan;
using runtime::timestamp;

namespace {

const runtime::logger log{"lease.kubernetes"};

// Lease objects are about 1 KiB; a larger answer is not one.
constexpr uint64_t max_response_bytes = 1024 * 1024;

backend_reply reply_of(backend_status status, std::string detail) {
  backend_reply r;
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

// The longer of the Retry-After header and the Status body's
// `details.retryAfterSeconds`.
timespan retry_after_of(const http_response& resp,
                        const kubernetes_status* status) {
  auto result = resp.retry_after();
  if (status != nullptr)
    result = std::max<timespan>(result, status->retry_after);
  return result;
}

} // namespace

// -- impl ---------------------------------------------------------------------

class kubernetes_lease_backend::impl
  : public std::enable_shared_from_this<kubernetes_lease_backend::impl> {
public:
  impl(kubernetes_lease_backend_options opts,
       std::shared_ptr<runtime::kubernetes_api_client> client)
    : opts_(std::move(opts)), client_(std::move(client)) {}

  ~impl() {
    client_->shutdown();
  }

  void shutdown() {
    client_->shutdown();
  }

  const kubernetes_lease_backend_options& opts() const {
    return opts_;
  }

  // One lease operation: a short chain of HTTP exchanges.
  struct op {
    backend_op kind;
    backend_request req;
    lease_backend::callback done;
    bool conflict_retried = false;
  };
  using op_ptr = std::shared_ptr<op>;

  void start(backend_op kind, const backend_request& req, callback done) {
    auto o = std::make_shared<op>(op{kind, req, std::move(done)});
    switch (kind) {
      case backend_op::acquire:
        read(o,
             [this](const op_ptr& o, auto obj) { acquire_after_read(o, obj); });
        return;
      case backend_op::renew:
      case backend_op::release: {
        auto cached = cached_object(o->req);
        if (!cached) {
          read(o,
               [this](const op_ptr& o, auto obj) { write_after_read(o, obj); });
          return;
        }
        write_own(o, *cached);
        return;
      }
    }
  }

private:
  struct session {
    kubernetes_observation observation;
    std::optional<kubernetes_lease_object> last;
    int64_t highest_transitions = 0;
  };

  using session_key = std::pair<std::string, std::string>; // name, owner

  std::string object_path(std::string_view name) const {
    return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
                       opts_.namespace_name, name);
  }

  std::string collection_path() const {
    return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                       opts_.namespace_name);
  }

  timestamp now() const {
    return opts_.clock->now();
  }

  std::string micro_now() const {
    return format_micro_time(opts_.wall_clock());
  }

  // -- HTTP -------------------------------------------------------------------

  using http_done = std::function<void(runtime::expected<http_response>)>;

  // One exchange; a 401 re-reads the token and retries once (the client).
  void http(std::string method, std::string path, std::string body,
            http_done done) {
    client_->request(std::move(method), std::move(path), std::move(body),
                     max_response_bytes, std::move(done));
  }

  // A reply for an exchange that failed or answered a status the caller
  // does not handle itself.
  backend_reply failure(std::string_view what,
                        const runtime::expected<http_response>& res) const {
    auto where = fmt::format("Kubernetes API {}: {}", opts_.api_server, what);
    if (!res)
      return reply_of(backend_status::unavailable,
                      fmt::format("{}: {}", where, res.error().message));
    auto& resp = *res;
    auto st = parse_kubernetes_status(resp.body);
    auto message = st ? escape_controls(st->message)
                      : fmt::format("(no Status body: {})", st.error().message);
    auto code = resp.status;
    if (code == 429 || code >= 500) {
      auto r = reply_of(backend_status::unavailable,
                        fmt::format("{}: HTTP {}: {}", where, code, message));
      r.retry_after = retry_after_of(resp, st ? &*st : nullptr);
      return r;
    }
    if (code == 401)
      return reply_of(backend_status::rejected,
                      fmt::format("{}: HTTP 401 Unauthorized even after "
                                  "re-reading the token{}: {}",
                                  where, client_->token_source(), message));
    if (code == 403)
      return reply_of(backend_status::rejected,
                      fmt::format("{}: HTTP 403 Forbidden: RBAC denies this "
                                  "request; the Role needs the verbs get, "
                                  "create and update on "
                                  "coordination.k8s.io leases in namespace "
                                  "{}: {}",
                                  where, opts_.namespace_name, message));
    return reply_of(backend_status::rejected,
                    fmt::format("{}: HTTP {}{}: {}", where, code,
                                st && !st->reason.empty() ? fmt::format(
                                  " {}", escape_controls(st->reason))
                                                          : std::string{},
                                message));
  }

  // Parses a 2xx answer that must carry a Lease.
  runtime::expected<kubernetes_lease_object>
  lease_of(std::string_view what, const http_response& resp) const {
    auto type = runtime::media_type_of(resp);
    if (!type.empty() && type != "application/json")
      return make_error(errc::backend_protocol_violation,
                        fmt::format("Kubernetes API {}: {}: HTTP {} with "
                                    "Content-Type {}, expected "
                                    "application/json",
                                    opts_.api_server, what, resp.status, type));
    auto obj = parse_kubernetes_lease(resp.body);
    if (!obj)
      return make_error(errc::backend_protocol_violation,
                        fmt::format("Kubernetes API {}: {}: HTTP {}: {}",
                                    opts_.api_server, what, resp.status,
                                    obj.error().message));
    return obj;
  }

  // -- sessions ---------------------------------------------------------------

  std::optional<kubernetes_lease_object>
  cached_object(const backend_request& req) {
    std::lock_guard guard{mtx_};
    auto i = sessions_.find({req.name, req.owner});
    if (i == sessions_.end() || !i->second.last)
      return std::nullopt;
    auto& last = *i->second.last;
    if (last.holder() != req.owner || last.acquisition != req.acquisition)
      return std::nullopt;
    return last;
  }

  // Records a freshly read or written object; returns whether the holder is
  // live by this process's observation.
  bool remember(const backend_request& req, const kubernetes_lease_object& x) {
    std::lock_guard guard{mtx_};
    auto& s = sessions_[{req.name, req.owner}];
    observe(s.observation, x, now());
    s.highest_transitions
      = std::max(s.highest_transitions, x.lease_transitions.value_or(0));
    s.last = x;
    return held_by_observation(x, s.observation, now(), req.ttl);
  }

  int64_t next_transitions(const backend_request& req, int64_t current) {
    std::lock_guard guard{mtx_};
    auto& s = sessions_[{req.name, req.owner}];
    return std::max(s.highest_transitions, current) + 1;
  }

  void forget(const backend_request& req) {
    std::lock_guard guard{mtx_};
    if (auto i = sessions_.find({req.name, req.owner}); i != sessions_.end())
      i->second.last.reset();
  }

  backend_reply record_reply(backend_status status,
                             const kubernetes_lease_object& x,
                             std::string detail,
                             const backend_request& req) const {
    auto r = reply_of(status, std::move(detail));
    r.holder = x.holder();
    r.token = static_cast<uint64_t>(x.lease_transitions.value_or(0));
    r.acquisition = x.acquisition;
    // A record naming a holder without troupe's annotation was written by
    // another program (or by hand): never this acquisition, even when the
    // holder name is this owner's.
    if (r.acquisition == 0 && !r.holder.empty())
      r.acquisition = req.acquisition + 1 == 0 ? 1 : req.acquisition + 1;
    r.token_scope = x.uid;
    return r;
  }

  // -- steps ------------------------------------------------------------------

  using read_next = std::function<void(const op_ptr&,
                                       std::optional<kubernetes_lease_object>)>;

  // GET the object; `next` gets it, or nullopt on 404. Other outcomes end
  // the operation.
  void read(const op_ptr& o, read_next next) {
    auto self = shared_from_this();
    http(
      "GET", object_path(o->req.name), {},
      [self, o, next = std::move(next)](auto res) {
        if (res && res->status == 404) {
          next(o, std::nullopt);
          return;
        }
        if (!res || res->status != 200) {
          o->done(
            self->failure(fmt::format("GET lease \"{}\"", o->req.name), res));
          return;
        }
        auto obj
          = self->lease_of(fmt::format("GET lease \"{}\"", o->req.name), *res);
        if (!obj) {
          o->done(reply_of(backend_status::unavailable, obj.error().message));
          return;
        }
        next(o, std::move(*obj));
      });
  }

  void acquire_after_read(const op_ptr& o,
                          std::optional<kubernetes_lease_object> obj) {
    if (!obj) {
      create(o);
      return;
    }
    bool live = remember(o->req, *obj);
    auto holder = obj->holder();
    if (holder == o->req.owner && obj->acquisition == o->req.acquisition) {
      // Our earlier write applied and its reply was lost. Answering from
      // this read would be unsafe: the lease actor counts its deadline
      // from this attempt's start, contenders count from the change they
      // observed, which is older. Write again (as a renewal) so that the
      // record changes after this attempt started.
      write_own(o, *obj);
      return;
    }
    if (live) {
      o->done(record_reply(backend_status::held, *obj,
                           fmt::format("held by \"{}\" (resourceVersion {} "
                                       "changed within its "
                                       "leaseDurationSeconds)",
                                       escape_for_message(holder, 200),
                                       obj->resource_version),
                           o->req));
      return;
    }
    kubernetes_lease_write w;
    w.resource_version = obj->resource_version;
    w.lease_transitions
      = next_transitions(o->req, obj->lease_transitions.value_or(0));
    w.acquire_time = micro_now();
    write(o, "PUT", obj->raw, std::move(w));
  }

  void create(const op_ptr& o) {
    kubernetes_lease_write w;
    w.lease_transitions = next_transitions(o->req, 0);
    w.acquire_time = micro_now();
    write(o, "POST", {}, std::move(w));
  }

  // After a renew or release found no usable cached object (or a 409).
  void write_after_read(const op_ptr& o,
                        std::optional<kubernetes_lease_object> obj) {
    if (!obj) {
      forget(o->req);
      o->done(
        reply_of(backend_status::not_found,
                 fmt::format("lease \"{}\" does not exist", o->req.name)));
      return;
    }
    remember(o->req, *obj);
    bool ours
      = obj->holder() == o->req.owner && obj->acquisition == o->req.acquisition;
    if (!ours) {
      forget(o->req);
      if (obj->holder().empty()) {
        o->done(record_reply(
          backend_status::not_found, *obj,
          fmt::format("lease \"{}\" has no holder", o->req.name), o->req));
        return;
      }
      o->done(record_reply(
        backend_status::held, *obj,
        fmt::format("held by \"{}\"", escape_for_message(obj->holder(), 200)),
        o->req));
      return;
    }
    write_own(o, *obj);
  }

  // Renew or release a record that names us.
  void write_own(const op_ptr& o, const kubernetes_lease_object& obj) {
    kubernetes_lease_write w;
    w.resource_version = obj.resource_version;
    w.lease_transitions = obj.lease_transitions.value_or(0);
    write(o, "PUT", obj.raw, std::move(w));
  }

  // POST or PUT `w` (completed here with name, holder, duration, times).
  void write(const op_ptr& o, std::string method, const std::string& base,
             kubernetes_lease_write w) {
    bool release = o->kind == backend_op::release;
    w.name = o->req.name;
    w.namespace_name = opts_.namespace_name;
    w.holder_identity = release ? std::string{} : o->req.owner;
    w.lease_duration_seconds
      = release ? 1
                : std::chrono::duration_cast<std::chrono::seconds>(o->req.ttl)
                    .count();
    w.acquisition = release ? 0 : o->req.acquisition;
    w.renew_time = micro_now();
    auto body = render_kubernetes_lease(base, w);
    if (!body) {
      o->done(reply_of(backend_status::unavailable, body.error().message));
      return;
    }
    auto path = method == "POST" ? collection_path() : object_path(o->req.name);
    auto what = fmt::format("{} lease \"{}\" ({})", method, o->req.name,
                            to_string(o->kind));
    auto self = shared_from_this();
    http(method, std::move(path), std::move(*body),
         [self, o, what](auto res) { self->after_write(o, what, res); });
  }

  void after_write(const op_ptr& o, const std::string& what,
                   const runtime::expected<http_response>& res) {
    if (res && (res->status == 200 || res->status == 201)) {
      auto obj = lease_of(what, *res);
      if (!obj) {
        // The write probably applied; the next call re-reads.
        o->done(reply_of(backend_status::unavailable, obj.error().message));
        return;
      }
      if (o->kind != backend_op::release
          && (obj->holder() != o->req.owner
              || obj->acquisition != o->req.acquisition)) {
        // Not what we wrote (a proxy or cache answering, a broken server):
        // never count it as our write. The next call re-reads.
        forget(o->req);
        o->done(reply_of(
          backend_status::unavailable,
          fmt::format("Kubernetes API {}: {}: HTTP {} but the returned "
                      "Lease does not name \"{}\" with acquisition {:x} "
                      "(holderIdentity \"{}\", acquisition {:x})",
                      opts_.api_server, what, res->status,
                      escape_for_message(o->req.owner, 200), o->req.acquisition,
                      escape_for_message(obj->holder(), 200),
                      obj->acquisition)));
        return;
      }
      remember(o->req, *obj);
      if (o->kind == backend_op::release) {
        forget(o->req);
        o->done(reply_of(backend_status::ok, "released"));
        return;
      }
      if (res->status == 201 && o->kind == backend_op::renew) {
        recreated_by_renewal(o, *obj);
        return;
      }
      o->done(record_reply(backend_status::ok, *obj, what, o->req));
      return;
    }
    if (res && res->status == 409) {
      if (o->kind == backend_op::acquire) {
        auto st = parse_kubernetes_status(res->body);
        o->done(
          reply_of(backend_status::conflict,
                   fmt::format("{}: HTTP 409 {}", what,
                               st ? escape_controls(st->reason) : "Conflict")));
        return;
      }
      if (o->conflict_retried) {
        o->done(reply_of(backend_status::conflict,
                         fmt::format("{}: HTTP 409 twice", what)));
        return;
      }
      // Our earlier write may have applied with its reply lost (L3), or the
      // cached resourceVersion is stale (L12): re-read and decide.
      o->conflict_retried = true;
      read(o, [this](const op_ptr& o, auto obj) { write_after_read(o, obj); });
      return;
    }
    o->done(failure(what, res));
  }

  // A renewal's PUT answered 201: the object was deleted while held and the
  // server created it anew (it ignored the uid precondition the PUT
  // carries; an API server enforces it and answers 409). The record
  // disappeared, so the lease is lost: release the re-created object (it
  // would block every contender, us included, for a ttl) and answer
  // not_found.
  void recreated_by_renewal(const op_ptr& o,
                            const kubernetes_lease_object& obj) {
    log.warning("lease \"{}\": the Lease object was deleted while held and "
                "the renewal re-created it (new uid {}): lost; releasing the "
                "re-created object",
                o->req.name, obj.uid);
    auto detail = fmt::format("lease \"{}\" was deleted while held (the "
                              "renewal's PUT re-created it with uid {}, which "
                              "was released): the record disappeared",
                              o->req.name, obj.uid);
    auto undo = std::make_shared<op>(
      op{backend_op::release, o->req,
         [o, detail = std::move(detail)](backend_reply) {
           o->done(reply_of(backend_status::not_found, detail));
         }});
    write_own(undo, obj);
  }

  kubernetes_lease_backend_options opts_;
  std::shared_ptr<runtime::kubernetes_api_client> client_;
  std::mutex mtx_;
  std::map<session_key, session> sessions_;
};

// -- kubernetes_lease_backend -------------------------------------------------

runtime::expected<std::shared_ptr<kubernetes_lease_backend>>
kubernetes_lease_backend::make(kubernetes_lease_backend_options opts) {
  auto invalid = [](std::string msg) {
    return make_error(errc::invalid_settings, std::move(msg));
  };
  if (auto err = runtime::validate_kubernetes_namespace(opts.namespace_name))
    return invalid(std::move(err.message));
  auto client = runtime::kubernetes_api_client::make(opts);
  if (!client)
    return invalid(std::move(client.error().message));
  // The client completed the options (canonical URL, the clock).
  static_cast<runtime::kubernetes_api_options&>(opts) = (*client)->options();
  if (!opts.wall_clock)
    opts.wall_clock = [] { return std::chrono::system_clock::now(); };
  auto ptr = std::make_shared<impl>(std::move(opts), std::move(*client));
  return std::shared_ptr<kubernetes_lease_backend>{
    new kubernetes_lease_backend(std::move(ptr))};
}

kubernetes_lease_backend::kubernetes_lease_backend(std::shared_ptr<impl> ptr)
  : impl_(std::move(ptr)) {}

kubernetes_lease_backend::~kubernetes_lease_backend() {
  impl_->shutdown();
}

void kubernetes_lease_backend::acquire(const backend_request& req,
                                       callback done) {
  impl_->start(backend_op::acquire, req, std::move(done));
}

void kubernetes_lease_backend::renew(const backend_request& req,
                                     callback done) {
  impl_->start(backend_op::renew, req, std::move(done));
}

void kubernetes_lease_backend::release(const backend_request& req,
                                       callback done) {
  impl_->start(backend_op::release, req, std::move(done));
}

std::string kubernetes_lease_backend::describe() const {
  return fmt::format("Kubernetes leases in namespace {} at {}",
                     impl_->opts().namespace_name, impl_->opts().api_server);
}

runtime::error
kubernetes_lease_backend::validate(const lease_settings& settings) const {
  if (auto err = validate_dns1123_subdomain(settings.name, "lease name"))
    return err;
  auto invalid = [](std::string msg) {
    return make_error(errc::invalid_settings, std::move(msg));
  };
  using std::chrono::seconds;
  if (settings.ttl < seconds{1} || settings.ttl % seconds{1} != timespan{0})
    return invalid(fmt::format(
      "lease.ttl = {} ms: the Kubernetes backend stores leaseDurationSeconds, "
      "so the ttl must be a whole number of seconds (at least 1s)",
      std::chrono::duration_cast<std::chrono::milliseconds>(settings.ttl)
        .count()));
  auto& opts = impl_->opts();
  if (opts.request_timeout >= settings.renewal_interval)
    return invalid(fmt::format(
      "lease.kubernetes.request_timeout ({} ms) must be shorter than "
      "lease.renewal_interval ({} ms, default: ttl / 3); lower "
      "lease.kubernetes.request_timeout or raise lease.ttl",
      std::chrono::duration_cast<std::chrono::milliseconds>(
        opts.request_timeout)
        .count(),
      std::chrono::duration_cast<std::chrono::milliseconds>(
        settings.renewal_interval)
        .count()));
  if (opts.request_timeout > settings.operation_timeout)
    return invalid(
      fmt::format("lease.kubernetes.request_timeout ({} ms) must not exceed "
                  "lease.operation_timeout ({} ms)",
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                    opts.request_timeout)
                    .count(),
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                    settings.operation_timeout)
                    .count()));
  return {};
}

} // namespace troupe::lease
