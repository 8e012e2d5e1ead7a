#include "troupe/runtime/http_client.hpp"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <fmt/format.h>

#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::runtime {

namespace {

/// The engine's completion, posted back to the actor (never delivered from
/// the io thread).
using done_atom = caf::atom_constant<caf::atom("httpdone")>;

/// The public protocol plus the internal completion messages.
using http_client_impl = http_client_actor::extend<
  caf::reacts_to<done_atom, uint64_t, http_response>,
  caf::reacts_to<done_atom, uint64_t, caf::error>>;

struct pending_exchange {
  caf::typed_response_promise<http_response> promise;
  /// "GET https://host/x", for the shutdown error.
  std::string where;
};

struct http_client_state {
  static inline const char* name = "troupe.http_client";

  std::unique_ptr<http_engine> engine;
  uint64_t next_id = 0;
  std::unordered_map<uint64_t, pending_exchange> pending;

  ~http_client_state() {
    // Joins the io thread; its callbacks only anon_send to this (now dead)
    // actor, so they never touch this state.
    engine.reset();
    for (auto& [id, x] : pending)
      x.promise.deliver(to_caf_error(
        make_error(errc::http_shutdown,
                   fmt::format("{}: HTTP client terminated", x.where))));
  }
};

const logger& http_log() {
  static const logger instance{"http"};
  return instance;
}

std::string describe(const http_request& req) {
  if (auto url = parse_url(req.url))
    return fmt::format("{} {}", req.method, url->to_string());
  return fmt::format("{} <invalid URL>", req.method);
}

http_client_impl::behavior_type
http_client(http_client_impl::stateful_pointer<http_client_state> self,
            http_tls_settings tls) {
  self->state.engine = std::make_unique<http_engine>(std::move(tls));
  return {
    [=](http_request& req) -> caf::result<http_response> {
      auto& st = self->state;
      if (auto err = validate_request(req)) {
        http_log().debug("rejected: {}", err.message);
        return to_caf_error(err);
      }
      auto id = ++st.next_id;
      auto rp = self->make_response_promise<http_response>();
      st.pending.emplace(id, pending_exchange{rp, describe(req)});
      // Weak: a pending exchange must not keep a dropped client alive.
      caf::weak_actor_ptr weak{self->ctrl()};
      st.engine->start(
        std::move(req), [weak, id](expected<http_response> result) {
          auto strong = weak.lock();
          if (!strong)
            return;
          auto hdl = caf::actor_cast<http_client_impl>(strong);
          if (result)
            caf::anon_send(hdl, done_atom::value, id, std::move(*result));
          else
            caf::anon_send(hdl, done_atom::value, id,
                           to_caf_error(result.error()));
        });
      return rp;
    },
    [=](done_atom, uint64_t id, http_response& res) {
      auto i = self->state.pending.find(id);
      if (i == self->state.pending.end())
        return;
      i->second.promise.deliver(std::move(res));
      self->state.pending.erase(i);
    },
    [=](done_atom, uint64_t id, caf::error& err) {
      auto i = self->state.pending.find(id);
      if (i == self->state.pending.end())
        return;
      i->second.promise.deliver(std::move(err));
      self->state.pending.erase(i);
    },
  };
}

} // namespace

http_client_actor spawn_http_client(caf::actor_system& sys,
                                    http_tls_settings tls) {
  return sys.spawn(http_client, std::move(tls));
}

} // namespace troupe::runtime
