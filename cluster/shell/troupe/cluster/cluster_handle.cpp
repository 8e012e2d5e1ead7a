#include "troupe/cluster/cluster_handle.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/leave_progress.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/stop_signal.hpp"

namespace troupe::cluster {

namespace {

runtime::error not_running() {
  return runtime::make_error(remoting_errc::not_running,
                             "the cluster daemon is not running");
}

// Asks the daemon and waits for the answer (not from inside an actor).
template <class T, class Atom>
runtime::expected<T> ask(caf::actor_system* sys, const cluster_daemon& daemon,
                         runtime::timespan timeout, Atom atom) {
  if (!sys || !daemon)
    return not_running();
  caf::scoped_actor self{*sys};
  std::optional<runtime::expected<T>> result;
  self->request(daemon, timeout, atom)
    .receive([&](T& x) { result.emplace(std::move(x)); },
             [&](caf::error& err) {
               auto text = runtime::error_message(err);
               result.emplace(
                 runtime::error{"cluster", static_cast<uint8_t>(err.code()),
                                text.empty() ? sys->render(err) : text});
             });
  return std::move(*result);
}

} // namespace

runtime::expected<cluster_handle>
cluster_handle::start(caf::actor_system& sys, remoting_handle remoting,
                      cluster_daemon_settings settings) {
  if (!settings.counters)
    settings.counters = std::make_shared<membership_counters>();
  auto counters = settings.counters;
  auto daemon = spawn_cluster_daemon(sys, remoting, std::move(settings));
  if (!daemon)
    return daemon.error();
  cluster_handle h;
  h.sys_ = &sys;
  h.daemon_ = std::move(*daemon);
  h.counters_ = std::move(counters);
  h.self_ = remoting.local_address();
  h.remoting_ = std::move(remoting);
  return h;
}

namespace {

runtime::shutdown_reason shutdown_reason_of(self_stop_reason why) {
  switch (why) {
    case self_stop_reason::left:
      return runtime::shutdown_reason::cluster_leaving;
    case self_stop_reason::downed:
      return runtime::shutdown_reason::cluster_downing;
    case self_stop_reason::removed:
      return runtime::shutdown_reason::cluster_removed;
    case self_stop_reason::join_unsuccessful:
      return runtime::shutdown_reason::cluster_join_unsuccessful;
    case self_stop_reason::merging:
      return runtime::shutdown_reason::cluster_merge;
  }
  return runtime::shutdown_reason::cluster_removed;
}

// Asks the daemon for this node's member and the view's members and
// applies the core's rule (leave_progress.hpp). A failed query means this
// node is no longer a member (removed, or its daemon stopped).
bool reached(const cluster_handle& h, leave_stage stage,
             runtime::timespan timeout) {
  auto me = h.self_member(timeout);
  if (!me)
    return leave_reached(stage, nullptr, {});
  std::vector<member> members;
  if (stage == leave_stage::removed && me->status == member_status::exiting)
    if (auto st = h.state(timeout))
      members = std::move(st->members);
  return leave_reached(stage, &*me, members);
}

// Polls `reached` until it holds or the phase's deadline passes; a timeout
// is the phase's (the runner logs it).
void wait_until(const cluster_handle& h, leave_stage stage,
                const runtime::shutdown_context& ctx) {
  using namespace std::chrono_literals;
  while (ctx.remaining() > 0ns) {
    if (reached(h, stage, std::min<runtime::timespan>(2s, ctx.remaining())))
      return;
    std::this_thread::sleep_for(
      std::min<runtime::timespan>(50ms, ctx.remaining()));
  }
}

// Adds the cluster's tasks to `node`'s coordinated shutdown: leave and wait
// through leaving, exiting and removal (Akka's cluster-leave,
// cluster-exiting and cluster-exiting-done), then stop the daemon. A node
// the cluster stopped (downed, removed, refused) has nothing to leave.
void add_shutdown_tasks(runtime::node& node, const cluster_handle& h) {
  using runtime::shutdown_phase;
  auto self = h.self_address();
  node.add_shutdown_task(
    shutdown_phase::cluster_leave, "cluster leave",
    [h, self](const runtime::shutdown_context& ctx) {
      if (runtime::stopped_by_cluster(ctx.reason))
        return;
      auto me = h.self_member(
        std::min<runtime::timespan>(std::chrono::seconds{2}, ctx.remaining()));
      if (!me || me->status == member_status::down
          || me->status == member_status::removed)
        return;
      if (me->status != member_status::leaving
          && me->status != member_status::exiting) {
        runtime::logger{"cluster"}.info("leaving the cluster ({})",
                                        to_string(ctx.reason));
        h.leave(self);
      }
      wait_until(h, leave_stage::leaving, ctx);
    });
  node.add_shutdown_task(shutdown_phase::cluster_exiting,
                         "cluster exiting (singletons handed over)",
                         [h](const runtime::shutdown_context& ctx) {
                           if (!runtime::stopped_by_cluster(ctx.reason))
                             wait_until(h, leave_stage::exiting, ctx);
                         });
  node.add_shutdown_task(shutdown_phase::cluster_exiting_done,
                         "cluster exiting done (removed)",
                         [h](const runtime::shutdown_context& ctx) {
                           if (!runtime::stopped_by_cluster(ctx.reason))
                             wait_until(h, leave_stage::removed, ctx);
                         });
  node.add_shutdown_task(shutdown_phase::cluster_shutdown, "cluster daemon",
                         [h](const runtime::shutdown_context&) { h.stop(); });
}

} // namespace

runtime::expected<cluster_handle>
cluster_handle::start(runtime::node& node, remoting_handle remoting,
                      shutdown_hook hook) {
  auto membership = membership_settings_from_config(node.cfg());
  if (!membership)
    return membership.error();
  cluster_daemon_settings s;
  s.membership = std::move(*membership);
  s.config = join_config_of(node.cfg());
  s.checker = join_config_checker_of(node.cfg());
  auto* n = &node;
  s.on_shutdown = [n, hook = std::move(hook)](const self_stop& stop) {
    if (hook)
      hook(stop);
    auto reason = shutdown_reason_of(stop.reason);
    if (runtime::stopped_by_cluster(reason))
      runtime::logger{"cluster"}.error("the cluster stopped this node: {}",
                                       stop.text);
    else
      runtime::logger{"cluster"}.info("{}", stop.text);
    n->coordinated_shutdown().run(reason);
    runtime::request_stop();
  };
  s.on_leaving = [n] {
    if (n->coordinated_shutdown().run(
          runtime::shutdown_reason::cluster_leaving))
      runtime::logger{"cluster"}.info(
        "this node is leaving the cluster: coordinated shutdown started");
    runtime::request_stop();
  };
  s.clock = &node.clock();
  auto h = start(node.system(), std::move(remoting), std::move(s));
  if (h)
    add_shutdown_tasks(node, *h);
  return h;
}

void cluster_handle::join(std::vector<endpoint> seeds) const {
  if (daemon_)
    caf::anon_send(daemon_, join_atom::value, std::move(seeds));
}

void cluster_handle::leave(const unique_address& node) const {
  if (daemon_)
    caf::anon_send(daemon_, leave_atom::value, node);
}

void cluster_handle::down(const unique_address& node) const {
  if (daemon_)
    caf::anon_send(daemon_, down_atom::value, node);
}

void cluster_handle::set_contact_endpoints(
  std::vector<endpoint> endpoints) const {
  if (daemon_)
    caf::anon_send(daemon_, contacts_atom::value, std::move(endpoints));
}

incarnation_report cluster_handle::incarnation() const {
  return counters_ ? counters_->report() : incarnation_report{};
}

void cluster_handle::hold_exit(std::string holder, bool hold) const {
  if (daemon_)
    caf::anon_send(daemon_, hold_exit_atom::value, std::move(holder), hold);
}

void cluster_handle::subscribe(const caf::actor& subscriber) const {
  if (daemon_)
    caf::anon_send(daemon_, subscribe_atom::value, subscriber);
}

void cluster_handle::subscribe_view(const caf::actor& subscriber) const {
  if (daemon_)
    caf::anon_send(daemon_, subscribe_atom::value, view_atom::value,
                   subscriber);
}

void cluster_handle::unsubscribe(const caf::actor& subscriber) const {
  if (daemon_)
    caf::anon_send(daemon_, unsubscribe_atom::value, subscriber);
}

runtime::expected<member>
cluster_handle::self_member(runtime::timespan timeout) const {
  return ask<member>(sys_, daemon_, timeout, self_member_atom::value);
}

runtime::expected<current_cluster_state>
cluster_handle::state(runtime::timespan timeout) const {
  return ask<current_cluster_state>(sys_, daemon_, timeout, state_atom::value);
}

void cluster_handle::stop() const {
  if (!daemon_)
    return;
  remoting_.unpublish(daemon_name);
  caf::anon_send_exit(daemon_, caf::exit_reason::user_shutdown);
}

membership_counter_values cluster_handle::counters() const noexcept {
  if (!counters_)
    return {};
  return {counters_->gossip_sent.load(std::memory_order_relaxed),
          counters_->gossip_received.load(std::memory_order_relaxed),
          counters_->leader_changes.load(std::memory_order_relaxed),
          counters_->foreign_detections.load(std::memory_order_relaxed)};
}

runtime::timespan cluster_handle::last_confirmed() const noexcept {
  if (!counters_)
    return runtime::timespan::max();
  auto ns = counters_->last_confirmed_ns.load(std::memory_order_acquire);
  if (ns == std::numeric_limits<int64_t>::max())
    return runtime::timespan::max();
  if (ns == std::numeric_limits<int64_t>::min())
    return runtime::timespan::min();
  return std::chrono::duration_cast<runtime::timespan>(
    std::chrono::nanoseconds{ns});
}

} // namespace troupe::cluster
