#include "troupe/lease/lease_actor.hpp"

#include <map>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "troupe/lease/lease_shared.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::lease {

namespace {

struct lease_actor_state {
  static inline const char* name = "troupe.lease";

  std::shared_ptr<lease_fsm> fsm;
  std::shared_ptr<lease_backend> backend;
  std::shared_ptr<detail::lease_shared> shared;
  std::map<uint64_t, caf::typed_response_promise<acquire_result>> acquires;
  std::map<uint64_t, caf::typed_response_promise<bool>> releases;
  std::vector<caf::actor> subscribers;
  uint64_t next_request = 0;
  runtime::logger log{"lease"};
};

using lease_self = lease_actor::stateful_pointer<lease_actor_state>;

// Executes the effects of one FSM step.
void execute(lease_self self, lease_effects effects);

void feed(lease_self self, const lease_input& in) {
  execute(self, self->state.fsm->step(in, self->clock().now()));
}

void call(lease_self self, const call_backend& c) {
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  auto done = [weak, attempt = c.attempt](backend_reply reply) {
    // May run on any thread: hand the reply to the actor as a message.
    if (auto strong = caf::actor_cast<caf::actor>(weak.lock()))
      caf::anon_send(strong, backend_replied{attempt, std::move(reply)});
  };
  self->state.backend->call(c.op, c.request, std::move(done));
}

caf::error to_caf(const runtime::error& err) {
  return runtime::to_caf_error(err);
}

void execute(lease_self self, lease_effects effects) {
  auto& st = self->state;
  auto& settings = st.fsm->settings();
  for (auto& e : effects) {
    if (auto* c = std::get_if<call_backend>(&e)) {
      call(self, *c);
    } else if (auto* t = std::get_if<start_timer>(&e)) {
      auto delay = t->at - self->clock().now();
      timer_fired msg{t->kind, t->timer_id};
      if (delay <= runtime::timespan{0})
        self->send(self, msg);
      else
        self->delayed_send(self, delay, msg);
    } else if (auto* a = std::get_if<acquire_completed>(&e)) {
      for (auto id : a->request_ids) {
        auto i = st.acquires.find(id);
        if (i == st.acquires.end())
          continue;
        if (a->answer.err)
          i->second.deliver(to_caf(a->answer.err));
        else
          i->second.deliver(acquire_result{a->answer.acquired, a->answer.token,
                                           a->answer.holder,
                                           a->answer.token_scope});
        st.acquires.erase(i);
      }
    } else if (auto* r = std::get_if<release_completed>(&e)) {
      for (auto id : r->request_ids) {
        auto i = st.releases.find(id);
        if (i == st.releases.end())
          continue;
        if (r->err)
          i->second.deliver(to_caf(r->err));
        else
          i->second.deliver(true);
        st.releases.erase(i);
      }
    } else if (auto* l = std::get_if<ownership_lost>(&e)) {
      lease_lost msg{settings.name, settings.owner, l->reason, l->token};
      st.log.warning("lost \"{}\" (owner {}, token {}): {}", settings.name,
                     settings.owner, l->token, l->reason);
      for (auto& sub : st.subscribers)
        caf::anon_send(sub, msg);
      st.shared->losses.fetch_add(1, std::memory_order_relaxed);
      st.shared->notify(msg);
    } else if (auto* d = std::get_if<deadline_changed>(&e)) {
      st.shared->publish_deadline(d->deadline);
      // Tokens grow with every acquisition and only then.
      auto token = st.fsm->token();
      if (token != st.shared->token.exchange(token, std::memory_order_acq_rel))
        st.shared->acquisitions.fetch_add(1, std::memory_order_relaxed);
    } else if (auto* s = std::get_if<state_changed>(&e)) {
      st.log.info("\"{}\" (owner {}) {} -> {}: {}", settings.name,
                  settings.owner, to_string(s->from), to_string(s->to), s->why);
    } else if (auto* n = std::get_if<notice>(&e)) {
      st.log.warning("{}", n->text);
    }
  }
}

lease_actor::behavior_type lease_impl(lease_self self, lease_settings settings,
                                      std::shared_ptr<lease_backend> backend,
                                      std::shared_ptr<detail::lease_shared> sh,
                                      uint64_t seed) {
  auto& st = self->state;
  st.fsm = std::make_shared<lease_fsm>(settings, seed);
  st.backend = std::move(backend);
  st.shared = std::move(sh);
  // Forget subscribers that terminated.
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& subs = self->state.subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(),
                              [&](const caf::actor& a) {
                                return a.address() == msg.source;
                              }),
               subs.end());
  });
  // On termination (an exit message, node shutdown) without release(): give
  // the lease up without waiting, so others need not wait for the ttl
  // (scenario S6's "release on stop"). A torn-down actor system destroys
  // actors without terminating them; then the ttl applies.
  self->attach_functor([fsm = st.fsm, backend = st.backend,
                        shared = st.shared](const caf::error&) {
    shared->publish_deadline(std::nullopt);
    auto effects = fsm->step(shutdown_requested{}, runtime::timestamp{});
    for (auto& e : effects)
      if (auto* call = std::get_if<call_backend>(&e))
        backend->release(call->request, [](backend_reply) {});
  });
  return {
    [=](acquire_atom, runtime::timespan wait) -> caf::result<acquire_result> {
      auto& st = self->state;
      auto id = ++st.next_request;
      auto rp = self->make_response_promise<acquire_result>();
      st.acquires.emplace(id, rp);
      feed(self, acquire_requested{id, self->clock().now() + wait});
      return rp;
    },
    [=](release_atom) -> caf::result<bool> {
      auto& st = self->state;
      auto id = ++st.next_request;
      auto rp = self->make_response_promise<bool>();
      st.releases.emplace(id, rp);
      feed(self, release_requested{id});
      return rp;
    },
    [=](subscribe_atom, caf::actor subscriber) {
      auto& subs = self->state.subscribers;
      if (std::find(subs.begin(), subs.end(), subscriber) == subs.end()) {
        self->monitor(subscriber);
        subs.push_back(std::move(subscriber));
      }
    },
    [=](unsubscribe_atom, caf::actor subscriber) {
      auto& subs = self->state.subscribers;
      subs.erase(std::remove(subs.begin(), subs.end(), subscriber), subs.end());
    },
    [=](status_atom) {
      auto& st = self->state;
      auto& s = st.fsm->settings();
      return lease_status{s.name,
                          s.owner,
                          std::string{to_string(st.fsm->state())},
                          st.fsm->token(),
                          st.shared->check_alive(),
                          st.backend->describe(),
                          st.fsm->token_scope()};
    },
    [=](backend_replied& msg) { feed(self, msg); },
    [=](timer_fired& msg) { feed(self, msg); },
  };
}

} // namespace

lease_actor spawn_lease_actor(caf::actor_system& sys, lease_settings settings,
                              std::shared_ptr<lease_backend> backend,
                              std::shared_ptr<detail::lease_shared> shared,
                              uint64_t seed) {
  return sys.spawn(lease_impl, std::move(settings), std::move(backend),
                   std::move(shared), seed);
}

} // namespace troupe::lease
