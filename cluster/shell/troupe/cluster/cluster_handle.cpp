#include "troupe/cluster/cluster_handle.hpp"

#include <optional>
#include <string>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/runtime/caf_glue.hpp"
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
  s.on_shutdown = hook ? std::move(hook)
                       : [](const std::string&) { runtime::request_stop(); };
  s.clock = &node.clock();
  auto h = start(node.system(), std::move(remoting), std::move(s));
  if (h)
    node.on_shutdown("cluster", [x = *h] { x.stop(); });
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
          counters_->leader_changes.load(std::memory_order_relaxed)};
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
