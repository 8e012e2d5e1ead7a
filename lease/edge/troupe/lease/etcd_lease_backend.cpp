#include "troupe/lease/etcd_lease_backend.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/etcd_client.hpp"
#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::lease {

namespace {

using etcd::answer_kind;
using runtime::render_duration;

// How often an acquire grants anew when its fresh lease vanished before the
// txn ("requested lease not found").
constexpr int extra_grants = 2;

// Grants remembered per (name, owner): older unattached ones are forgotten
// (they expire in etcd on their own).
constexpr size_t max_grants_per_session = 16;

// One lease this backend granted for (name, owner).
struct grant_entry {
  int64_t id = 0;
  uint64_t acquisition = 0;
  bool attached = false; ///< the key is on this lease (as far as we know)
  uint64_t token = 0;    ///< the key's create_revision while attached
};

using session_key = std::pair<std::string, std::string>; // (name, owner)

// A non-zero acquisition that differs from `a`: "the same owner, but not
// this acquisition" (another process using our identity).
uint64_t other_acquisition(uint64_t a) {
  return a + 1 == 0 ? 1 : a + 1;
}

int64_t whole_seconds(timespan ttl) {
  auto s = std::chrono::ceil<std::chrono::seconds>(ttl).count();
  return std::max<int64_t>(s, 1);
}

backend_reply make_reply(backend_status status, std::string detail) {
  backend_reply r;
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

// Parses an ok answer's body with `parse`; on a parse error answers `done`
// with `unavailable` naming the RPC and the field, and returns nullopt.
template <class Parser>
auto parse_or_answer(const etcd_result& r, Parser parse,
                     lease_backend::callback& done) {
  auto x = parse(r.body);
  using value = std::decay_t<decltype(*x)>;
  if (x)
    return std::optional<value>{std::move(*x)};
  done(make_reply(backend_status::unavailable,
                  fmt::format("{}: {}", r.where, x.error().message)));
  return std::optional<value>{};
}

} // namespace

class etcd_lease_backend::impl : public std::enable_shared_from_this<impl> {
public:
  impl(etcd_lease_backend_options opts, std::shared_ptr<etcd_client> client)
    : opts_(std::move(opts)), client_(std::move(client)) {}

  void acquire(backend_request req, callback done, int grants_left);
  void renew(backend_request req, callback done);
  void release(backend_request req, callback done);

  std::string key_of(std::string_view name) const {
    return opts_.key_prefix + std::string{name};
  }

  int64_t lease_id_of(const session_key& k) const {
    std::lock_guard guard{mtx_};
    auto i = sessions_.find(k);
    if (i == sessions_.end())
      return 0;
    for (auto& g : i->second)
      if (g.attached)
        return g.id;
    return 0;
  }

  etcd_lease_backend_stats stats() const {
    auto c = client_->stats();
    return {c.requests, c.authentications, grants_.load(), revokes_.load()};
  }

  const etcd_lease_backend_options& options() const noexcept {
    return opts_;
  }

  etcd_client& client() noexcept {
    return *client_;
  }

private:
  void acquire_txn(backend_request req, callback done, int64_t id,
                   int grants_left);
  void on_acquired(const backend_request& req, callback done, int64_t id,
                   const etcd::txn_response& txn);
  void on_acquire_conflict(const backend_request& req, callback done,
                           int64_t id, const etcd::txn_response& txn);
  void keepalive(backend_request req, int64_t id, callback done,
                 std::function<void(callback)> alive);
  void check_key(backend_request req, int64_t id, uint64_t token,
                 callback done);
  void on_key_changed(const backend_request& req, int64_t id, uint64_t token,
                      const std::string& where,
                      const std::vector<etcd::kv>& kvs, callback done);
  void revoke_all(std::vector<int64_t> ids, std::string why,
                  std::function<void(bool all_ok, std::string detail)> then);
  void revoke_quietly(int64_t id, std::string why);

  // Maps a failed RPC to a reply; 403 names the key.
  backend_reply failure(const etcd_result& r, const backend_request& req) const;

  // -- sessions (each takes the lock) --
  void add_grant(const backend_request& req, int64_t id);
  void forget(const backend_request& req, int64_t id);
  std::optional<grant_entry> attached(const backend_request& req) const;
  std::vector<int64_t> ids_of(const backend_request& req,
                              uint64_t acquisition) const;
  void forget_acquisition(const backend_request& req, uint64_t acquisition,
                          const std::vector<int64_t>& ids);
  bool note_ttl(const std::string& name);

  static session_key key(const backend_request& req) {
    return {req.name, req.owner};
  }

  etcd_lease_backend_options opts_;
  std::shared_ptr<etcd_client> client_;
  runtime::logger log_{"lease.etcd"};
  std::atomic<uint64_t> grants_{0};
  std::atomic<uint64_t> revokes_{0};
  mutable std::mutex mtx_;
  std::map<session_key, std::vector<grant_entry>> sessions_;
  std::set<std::string> ttl_logged_;
};

// -- sessions -----------------------------------------------------------------

void etcd_lease_backend::impl::add_grant(const backend_request& req,
                                         int64_t id) {
  std::lock_guard guard{mtx_};
  auto& grants = sessions_[key(req)];
  if (grants.size() >= max_grants_per_session) {
    auto i = std::find_if(grants.begin(), grants.end(),
                          [](auto& g) { return !g.attached; });
    if (i != grants.end())
      grants.erase(i);
  }
  grants.push_back({id, req.acquisition, false, 0});
}

void etcd_lease_backend::impl::forget(const backend_request& req, int64_t id) {
  std::lock_guard guard{mtx_};
  auto i = sessions_.find(key(req));
  if (i == sessions_.end())
    return;
  auto& grants = i->second;
  grants.erase(std::remove_if(grants.begin(), grants.end(),
                              [id](auto& g) { return g.id == id; }),
               grants.end());
  if (grants.empty())
    sessions_.erase(i);
}

std::optional<grant_entry>
etcd_lease_backend::impl::attached(const backend_request& req) const {
  std::lock_guard guard{mtx_};
  auto i = sessions_.find(key(req));
  if (i == sessions_.end())
    return std::nullopt;
  for (auto& g : i->second)
    if (g.attached)
      return g;
  return std::nullopt;
}

std::vector<int64_t>
etcd_lease_backend::impl::ids_of(const backend_request& req,
                                 uint64_t acquisition) const {
  std::vector<int64_t> ids;
  std::lock_guard guard{mtx_};
  auto i = sessions_.find(key(req));
  if (i == sessions_.end())
    return ids;
  // The attached lease first: its revoke is the one that matters.
  for (auto& g : i->second)
    if (g.acquisition == acquisition && g.attached)
      ids.push_back(g.id);
  for (auto& g : i->second)
    if (g.acquisition == acquisition && !g.attached)
      ids.push_back(g.id);
  return ids;
}

void etcd_lease_backend::impl::forget_acquisition(
  const backend_request& req, uint64_t acquisition,
  const std::vector<int64_t>& ids) {
  std::lock_guard guard{mtx_};
  auto i = sessions_.find(key(req));
  if (i == sessions_.end())
    return;
  auto& grants = i->second;
  grants.erase(std::remove_if(grants.begin(), grants.end(),
                              [&](auto& g) {
                                return g.acquisition == acquisition
                                       && std::find(ids.begin(), ids.end(),
                                                    g.id)
                                            != ids.end();
                              }),
               grants.end());
  if (grants.empty())
    sessions_.erase(i);
}

bool etcd_lease_backend::impl::note_ttl(const std::string& name) {
  std::lock_guard guard{mtx_};
  return ttl_logged_.insert(name).second;
}

// -- replies ------------------------------------------------------------------

backend_reply
etcd_lease_backend::impl::failure(const etcd_result& r,
                                  const backend_request& req) const {
  backend_reply out;
  out.detail = r.detail;
  out.retry_after = r.retry_after;
  switch (r.kind) {
    case answer_kind::unavailable:
      out.status = backend_status::unavailable;
      break;
    case answer_kind::lease_not_found:
      out.status = backend_status::not_found;
      break;
    case answer_kind::permission_denied:
      out.status = backend_status::rejected;
      out.detail = fmt::format(
        "{} (permission denied for key \"{}\"{})", r.detail,
        etcd::escape_for_message(key_of(req.name), 200),
        opts_.user.empty() ? std::string{}
                           : fmt::format(" as user \"{}\"", opts_.user));
      break;
    default:
      out.status = backend_status::rejected;
      break;
  }
  return out;
}

// -- acquire ------------------------------------------------------------------

void etcd_lease_backend::impl::acquire(backend_request req, callback done,
                                       int grants_left) {
  auto ttl = whole_seconds(req.ttl);
  client_->post(
    etcd::grant_path, etcd::grant_request(ttl),
    [self = shared_from_this(), req = std::move(req), done = std::move(done),
     grants_left, ttl](etcd_result r) mutable {
      if (r.kind != answer_kind::ok)
        return done(self->failure(r, req));
      auto g = parse_or_answer(r, etcd::parse_grant_response, done);
      if (!g)
        return;
      ++self->grants_;
      self->add_grant(req, g->id);
      if (g->ttl > ttl && self->note_ttl(req.name))
        self->log_.info("lease \"{}\": etcd granted TTL {}s instead of {}s "
                        "(its minimum); the local deadline still uses the "
                        "configured ttl {}",
                        req.name, g->ttl, ttl, render_duration(req.ttl));
      if (self->opts_.after_grant)
        self->opts_.after_grant(req.name, g->id);
      self->acquire_txn(std::move(req), std::move(done), g->id, grants_left);
    });
}

void etcd_lease_backend::impl::acquire_txn(backend_request req, callback done,
                                           int64_t id, int grants_left) {
  auto body = etcd::acquire_txn_request(key_of(req.name), req.owner, id);
  client_->post(
    etcd::txn_path, std::move(body),
    [self = shared_from_this(), req = std::move(req), done = std::move(done),
     id, grants_left](etcd_result r) mutable {
      switch (r.kind) {
        case answer_kind::ok:
          break;
        case answer_kind::lease_not_found:
          // The fresh lease vanished (revoked, or expired while the txn
          // waited): grant anew.
          self->forget(req, id);
          if (grants_left > 0)
            return self->acquire(std::move(req), std::move(done),
                                 grants_left - 1);
          return done(make_reply(backend_status::unavailable,
                                 fmt::format("{} (after {} fresh grants)",
                                             r.detail, extra_grants + 1)));
        case answer_kind::unavailable:
          // The txn may have applied: keep the lease as a candidate, a
          // retry recognises it.
          return done(self->failure(r, req));
        default:
          self->forget(req, id);
          self->revoke_quietly(id, "acquire refused");
          return done(self->failure(r, req));
      }
      auto txn = parse_or_answer(r, etcd::parse_txn_response, done);
      if (!txn)
        return;
      if (txn->succeeded)
        self->on_acquired(req, std::move(done), id, *txn);
      else
        self->on_acquire_conflict(req, std::move(done), id, *txn);
    });
}

void etcd_lease_backend::impl::on_acquired(const backend_request& req,
                                           callback done, int64_t id,
                                           const etcd::txn_response& txn) {
  if (txn.revision <= 0)
    return done(make_reply(
      backend_status::unavailable,
      fmt::format("etcd txn on key \"{}\" succeeded with revision {}",
                  etcd::escape_for_message(key_of(req.name), 200),
                  txn.revision)));
  auto token = static_cast<uint64_t>(txn.revision);
  std::vector<int64_t> stale;
  {
    std::lock_guard guard{mtx_};
    for (auto& g : sessions_[key(req)]) {
      if (g.id == id) {
        g.attached = true;
        g.token = token;
      } else {
        // The key was created now, so no other lease of ours holds it.
        g.attached = false;
        if (g.acquisition == req.acquisition)
          stale.push_back(g.id);
      }
    }
  }
  for (auto s : stale) {
    forget(req, s);
    revoke_quietly(s, "unused grant of the same acquisition");
  }
  backend_reply out;
  out.status = backend_status::ok;
  out.holder = req.owner;
  out.token = token;
  out.acquisition = req.acquisition;
  out.detail
    = fmt::format("etcd key \"{}\" created at revision {} on lease {}",
                  etcd::escape_for_message(key_of(req.name), 200), token, id);
  done(std::move(out));
}

void etcd_lease_backend::impl::on_acquire_conflict(
  const backend_request& req, callback done, int64_t id,
  const etcd::txn_response& txn) {
  // The fresh lease is not attached: give it back whatever we answer.
  forget(req, id);
  revoke_quietly(id, "acquire found the key held");
  if (txn.range_kvs.empty())
    return done(make_reply(
      backend_status::conflict,
      fmt::format("etcd key \"{}\" existed at the compare but the range "
                  "returned nothing",
                  etcd::escape_for_message(key_of(req.name), 200))));
  auto& kv = txn.range_kvs.front();
  backend_reply out;
  out.status = backend_status::held;
  out.holder = kv.value;
  out.token = static_cast<uint64_t>(std::max<int64_t>(kv.create_revision, 0));
  bool adopted = false;
  {
    std::lock_guard guard{mtx_};
    grant_entry* ours = nullptr;
    if (auto i = sessions_.find(key(req)); i != sessions_.end())
      for (auto& g : i->second)
        if (g.id == kv.lease && kv.lease != 0)
          ours = &g;
    if (ours != nullptr && ours->acquisition == req.acquisition) {
      // An earlier attempt of this acquisition applied and its reply was
      // lost: the key is ours (a self-conflict, success). Adopt the lease.
      ours->attached = true;
      ours->token = out.token;
      out.acquisition = req.acquisition;
      adopted = true;
    } else if (ours != nullptr) {
      out.acquisition = ours->acquisition;
    } else if (kv.value == req.owner) {
      // Our identity under a lease we did not grant: another process.
      out.acquisition = other_acquisition(req.acquisition);
    }
  }
  out.detail = fmt::format("etcd key \"{}\" exists since revision {} on "
                           "lease {}",
                           etcd::escape_for_message(key_of(req.name), 200),
                           kv.create_revision, kv.lease);
  if (!adopted)
    return done(std::move(out));
  // The adopted lease was granted by the earlier attempt, so etcd counts
  // its TTL from then, while the lease actor counts its deadline from this
  // attempt's start: keep it alive now, before answering success.
  keepalive(req, kv.lease, std::move(done),
            [out = std::move(out)](callback done) { done(out); });
}

// -- renew --------------------------------------------------------------------

void etcd_lease_backend::impl::renew(backend_request req, callback done) {
  auto held = attached(req);
  if (!held)
    return done(make_reply(
      backend_status::not_found,
      fmt::format("no etcd lease of this backend holds key \"{}\" for "
                  "\"{}\"",
                  etcd::escape_for_message(key_of(req.name), 200),
                  etcd::escape_for_message(req.owner, 200))));
  if (held->acquisition != req.acquisition) {
    backend_reply out;
    out.status = backend_status::held;
    out.holder = req.owner;
    out.acquisition = held->acquisition;
    out.token = held->token;
    out.detail = "the key is held by another acquisition of this owner";
    return done(std::move(out));
  }
  // The keepalive keeps the etcd lease; the range then checks that the key
  // is still the one this acquisition created (a key deleted by hand leaves
  // the lease alive).
  keepalive(req, held->id, std::move(done),
            [self = shared_from_this(), req, id = held->id,
             token = held->token](callback done) {
              self->check_key(req, id, token, std::move(done));
            });
}

void etcd_lease_backend::impl::check_key(backend_request req, int64_t id,
                                         uint64_t token, callback done) {
  auto body = etcd::range_request(key_of(req.name));
  client_->post(
    etcd::range_path, std::move(body),
    [self = shared_from_this(), req = std::move(req), id, token,
     done = std::move(done)](etcd_result r) mutable {
      if (r.kind != answer_kind::ok)
        return done(self->failure(r, req));
      auto kvs = parse_or_answer(r, etcd::parse_range_response, done);
      if (!kvs)
        return;
      if (!kvs->empty()) {
        auto& kv = kvs->front();
        if (kv.value == req.owner && kv.lease == id
            && kv.create_revision == static_cast<int64_t>(token)) {
          backend_reply out;
          out.status = backend_status::ok;
          out.holder = req.owner;
          out.token = token;
          out.acquisition = req.acquisition;
          return done(std::move(out));
        }
      }
      self->on_key_changed(req, id, token, r.where, *kvs, std::move(done));
    });
}

void etcd_lease_backend::impl::on_key_changed(const backend_request& req,
                                              int64_t id, uint64_t token,
                                              const std::string& where,
                                              const std::vector<etcd::kv>& kvs,
                                              callback done) {
  auto key = etcd::escape_for_message(key_of(req.name), 200);
  // The key is no longer ours: forget the lease. Revoke it unless the key
  // now lives on it (someone rewrote the value keeping the lease): a revoke
  // would delete that writer's key.
  forget(req, id);
  if (kvs.empty() || kvs.front().lease != id)
    revoke_quietly(id, "the key is no longer on it");
  if (kvs.empty())
    return done(make_reply(
      backend_status::not_found,
      fmt::format("{}: etcd key \"{}\" was deleted while its lease {} "
                  "lived (deleted by hand?): the record disappeared",
                  where, key, id)));
  auto& kv = kvs.front();
  backend_reply out;
  out.status = backend_status::held;
  out.holder = kv.value;
  out.token = static_cast<uint64_t>(std::max<int64_t>(kv.create_revision, 0));
  // Never this acquisition, even under our owner's name.
  if (kv.value == req.owner)
    out.acquisition = other_acquisition(req.acquisition);
  out.detail = fmt::format("{}: etcd key \"{}\" was replaced (create_revision "
                           "{} on lease {}; ours was created at {} on lease "
                           "{})",
                           where, key, kv.create_revision, kv.lease, token, id);
  done(std::move(out));
}

void etcd_lease_backend::impl::keepalive(backend_request req, int64_t id,
                                         callback done,
                                         std::function<void(callback)> alive) {
  client_->post(
    etcd::keepalive_path, etcd::lease_id_request(id),
    [self = shared_from_this(), req = std::move(req), done = std::move(done),
     id, alive = std::move(alive)](etcd_result r) mutable {
      if (r.kind == answer_kind::lease_not_found)
        self->forget(req, id);
      if (r.kind != answer_kind::ok)
        return done(self->failure(r, req));
      auto ka = parse_or_answer(r, etcd::parse_keepalive_response, done);
      if (!ka)
        return;
      if (ka->id != id)
        return done(
          make_reply(backend_status::unavailable,
                     fmt::format("{}: answered for lease {} instead of {}",
                                 r.where, ka->id, id)));
      if (ka->ttl <= 0) {
        self->forget(req, id);
        return done(make_reply(
          backend_status::not_found,
          fmt::format("{}: lease {} of key \"{}\" is gone (expired or "
                      "revoked: keepalive answered without TTL)",
                      r.where, id,
                      etcd::escape_for_message(self->key_of(req.name), 200))));
      }
      alive(std::move(done));
    });
}

// -- release ------------------------------------------------------------------

void etcd_lease_backend::impl::release(backend_request req, callback done) {
  auto ids = ids_of(req, req.acquisition);
  if (ids.empty())
    return done(make_reply(backend_status::not_found,
                           "no etcd lease of this backend for this "
                           "acquisition"));
  auto held = attached(req);
  bool delete_first = held && held->acquisition == req.acquisition;
  if (!delete_first) {
    // Only unattached grants (e.g. an acquire whose reply was lost): a
    // revoke also deletes the key if one of them did attach it.
    return revoke_all(ids, "release",
                      [self = shared_from_this(), req, ids,
                       done = std::move(done)](bool ok, std::string detail) {
                        if (!ok)
                          return done(make_reply(backend_status::unavailable,
                                                 std::move(detail)));
                        self->forget_acquisition(req, req.acquisition, ids);
                        done(make_reply(backend_status::ok, std::move(detail)));
                      });
  }
  auto body = etcd::release_txn_request(key_of(req.name), req.owner, held->id);
  client_->post(
    etcd::txn_path, std::move(body),
    [self = shared_from_this(), req = std::move(req), done = std::move(done),
     ids](etcd_result r) mutable {
      if (r.kind != answer_kind::ok)
        return done(self->failure(r, req));
      auto txn = parse_or_answer(r, etcd::parse_txn_response, done);
      if (!txn)
        return;
      // Deleted, or the key no longer names us (compare failed): released
      // either way. The leases go back to etcd; a failed revoke only
      // leaves a lease without keys that expires by itself.
      auto detail
        = txn->succeeded
            ? fmt::format("etcd key \"{}\" deleted",
                          etcd::escape_for_message(self->key_of(req.name), 200))
            : fmt::format("etcd key \"{}\" no longer names \"{}\"",
                          etcd::escape_for_message(self->key_of(req.name), 200),
                          etcd::escape_for_message(req.owner, 200));
      self->forget_acquisition(req, req.acquisition, ids);
      self->revoke_all(ids, "release",
                       [done = std::move(done),
                        detail = std::move(detail)](bool, std::string) {
                         done(make_reply(backend_status::ok, detail));
                       });
    });
}

void etcd_lease_backend::impl::revoke_all(
  std::vector<int64_t> ids, std::string why,
  std::function<void(bool all_ok, std::string detail)> then) {
  if (ids.empty())
    return then(true, {});
  auto id = ids.back();
  ids.pop_back();
  ++revokes_;
  client_->post(
    etcd::revoke_path, etcd::lease_id_request(id),
    [self = shared_from_this(), ids = std::move(ids), why,
     then = std::move(then), id](etcd_result r) mutable {
      bool ok
        = r.kind == answer_kind::ok || r.kind == answer_kind::lease_not_found;
      if (!ok && r.shut_down)
        self->log_.debug("revoke of etcd lease {} ({}) dropped: {}", id, why,
                         r.detail);
      else if (!ok)
        self->log_.warning("revoke of etcd lease {} ({}) failed: {}", id, why,
                           r.detail);
      self->revoke_all(std::move(ids), why,
                       [ok, detail = r.detail, then = std::move(then)](
                         bool rest_ok, std::string rest_detail) {
                         if (!ok)
                           return then(false, detail);
                         then(rest_ok, std::move(rest_detail));
                       });
    });
}

void etcd_lease_backend::impl::revoke_quietly(int64_t id, std::string why) {
  revoke_all({id}, std::move(why), [](bool, std::string) {});
}

// -- the backend --------------------------------------------------------------

runtime::expected<std::shared_ptr<etcd_lease_backend>>
etcd_lease_backend::make(etcd_lease_backend_options opts) {
  etcd_client_options copts;
  copts.endpoints = opts.endpoints;
  copts.user = opts.user;
  copts.password = opts.password;
  copts.password_file = opts.password_file;
  copts.tls = opts.tls;
  copts.request_timeout = opts.request_timeout;
  if (opts.min_ttl < std::chrono::seconds{1})
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("lease.etcd.min_ttl {} must be at least 1s",
                  render_duration(opts.min_ttl)));
  auto client = etcd_client::make(std::move(copts));
  if (!client)
    return client.error();
  auto ptr = std::make_shared<impl>(std::move(opts), std::move(*client));
  return std::shared_ptr<etcd_lease_backend>{
    new etcd_lease_backend(std::move(ptr))};
}

etcd_lease_backend::etcd_lease_backend(std::shared_ptr<impl> ptr)
  : impl_(std::move(ptr)) {}

etcd_lease_backend::~etcd_lease_backend() {
  // Pending calls complete with `unavailable` (their callbacks hold the
  // impl, which outlives this object until they ran).
  impl_->client().shutdown();
}

void etcd_lease_backend::acquire(const backend_request& req, callback done) {
  impl_->acquire(req, std::move(done), extra_grants);
}

void etcd_lease_backend::renew(const backend_request& req, callback done) {
  impl_->renew(req, std::move(done));
}

void etcd_lease_backend::release(const backend_request& req, callback done) {
  impl_->release(req, std::move(done));
}

std::string etcd_lease_backend::describe() const {
  return fmt::format("etcd {} (key prefix {})",
                     impl_->client().endpoints_text(),
                     impl_->options().key_prefix);
}

std::string etcd_lease_backend::key_of(std::string_view name) const {
  return impl_->key_of(name);
}

int64_t etcd_lease_backend::lease_id_of(std::string_view name,
                                        std::string_view owner) const {
  return impl_->lease_id_of({std::string{name}, std::string{owner}});
}

etcd_lease_backend_stats etcd_lease_backend::stats() const {
  return impl_->stats();
}

runtime::error etcd_lease_backend::validate(const lease_settings& s) const {
  auto invalid = [&](std::string what) {
    return runtime::make_error(errc::invalid_settings,
                               fmt::format("lease \"{}\": {}", s.name, what));
  };
  auto& o = impl_->options();
  if (s.ttl % std::chrono::seconds{1} != timespan{0})
    return invalid(fmt::format("lease.ttl {} is not a whole number of "
                               "seconds: etcd grants leases in seconds "
                               "(the etcd backend never rounds)",
                               render_duration(s.ttl)));
  if (s.ttl < o.min_ttl)
    return invalid(fmt::format("lease.ttl {} is below etcd's minimum TTL {} "
                               "(lease.etcd.min_ttl): etcd would silently "
                               "grant the minimum",
                               render_duration(s.ttl),
                               render_duration(o.min_ttl)));
  if (o.request_timeout >= s.renewal_interval)
    return invalid(fmt::format("lease.etcd.request_timeout {} must be "
                               "shorter than lease.renewal_interval {} "
                               "(default: ttl / 3); lower "
                               "lease.etcd.request_timeout or raise lease.ttl",
                               render_duration(o.request_timeout),
                               render_duration(s.renewal_interval)));
  if (o.request_timeout > s.operation_timeout)
    return invalid(fmt::format("lease.etcd.request_timeout {} must not "
                               "exceed operation_timeout {}",
                               render_duration(o.request_timeout),
                               render_duration(s.operation_timeout)));
  auto key = impl_->key_of(s.name);
  if (key.empty())
    return invalid("the etcd key (lease.etcd.key_prefix + name) is empty");
  if (key.find('\0') != std::string::npos)
    return invalid("the etcd key (lease.etcd.key_prefix + name) contains "
                   "a NUL byte");
  if (!etcd::is_valid_utf8(key))
    return invalid(fmt::format("the etcd key \"{}\" (lease.etcd.key_prefix "
                               "+ name) is not valid UTF-8",
                               etcd::escape_for_message(key, 200)));
  return {};
}

} // namespace troupe::lease
