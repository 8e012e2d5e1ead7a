#include "troupe/cluster/remoting.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/message_id.hpp>
#include <caf/send.hpp>
#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/message_codec.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_listener.hpp"
#include "troupe/cluster/remoting_wire.hpp"
#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/cluster/transport_config.hpp"
#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

namespace {

runtime::error not_running() {
  return runtime::make_error(remoting_errc::not_running,
                             "remoting is stopped (the node is shutting down)");
}

bool is_local(const detail::remoting_shared& sh, const unique_address& node) {
  return node.host == sh.local.host && node.port == sh.local.port
         && (node.uid == sh.local.uid || node.uid == 0);
}

// Delivers `msg` from this node to the actor published as `name` here.
void deliver_locally(detail::remoting_shared& sh, const std::string& name,
                     const caf::message& msg, const std::string& reply_to) {
  auto target = sh.registry->find_target(name);
  if (!target.actor) {
    if (auto level = sh.counters->dead_letter())
      sh.log.log(*level,
                 "dead letter: nothing is published under \"{}\" on this "
                 "node; dropped a local message",
                 name);
    return;
  }
  auto full = caf::message::concat(
    caf::make_message(remote_ref{sh.local, reply_to}), msg);
  caf::actor_cast<caf::abstract_actor*>(target.actor)
    ->enqueue(nullptr, caf::make_message_id(), std::move(full), nullptr);
}

// A tagged message for a name on this node.
void deliver_tagged_locally(detail::remoting_shared& sh, std::string_view name,
                            std::string_view tag, const caf::message& msg) {
  auto target = sh.registry->find_target(name);
  if (!target.receiver) {
    if (auto level = sh.counters->dead_letter())
      sh.log.log(*level,
                 "dead letter: nothing that takes tagged messages is "
                 "published under \"{}\" on this node; dropped a local "
                 "tagged message",
                 name);
    return;
  }
  (*target.receiver)(sh.local, tag, msg);
}

} // namespace

runtime::expected<remoting_handle>
remoting_handle::start(caf::actor_system& sys, const transport_factory& make,
                       remoting_settings settings) {
  auto sh = std::make_shared<detail::remoting_shared>(sys, settings);
  auto ctx = std::make_shared<detail::inbound_context>(sys, sh->registry,
                                                       sh->counters);
  sh->listener = std::make_shared<detail::remoting_listener>(
    std::move(ctx), settings.deliver_on_io_thread);
  auto t = make(sh->listener);
  if (!t)
    return t.error();
  sh->transport = std::move(*t);
  sh->local = sh->transport->local_address();
  sh->actor = spawn_remoting_actor(sys, sh);
  sh->listener->attach(caf::actor_cast<caf::actor>(sh->actor),
                       sh->transport.get());
  sh->log.info("remoting started on {}", to_string(sh->local));
  return remoting_handle{std::move(sh)};
}

remoting_settings remoting_settings_from_config(const runtime::config& cfg) {
  remoting_settings s;
  s.down_flush_timeout
    = cfg.get<runtime::timespan>("cluster.remoting.down_flush_timeout");
  s.deliver_on_io_thread
    = cfg.get<bool>("cluster.remoting.deliver_on_io_thread");
  return s;
}

runtime::expected<remoting_handle>
remoting_handle::start(runtime::node& node, uint64_t uid,
                       const transport_factory& make) {
  transport_factory tcp;
  if (!make) {
    auto settings = transport_settings_from_config(node.cfg(), uid);
    if (!settings)
      return settings.error();
    tcp = [s = std::move(*settings)](std::shared_ptr<transport_listener> l)
      -> runtime::expected<std::shared_ptr<cluster::transport>> {
      auto t = tcp_transport::make(s, std::move(l));
      if (!t)
        return t.error();
      return std::shared_ptr<cluster::transport>{std::move(*t)};
    };
  }
  auto handle = start(node.system(), make ? make : tcp,
                      remoting_settings_from_config(node.cfg()));
  if (!handle)
    return handle;
  // Dead letters are expected from the moment the node stops taking work
  // (the others still send to its regions and singletons until they learn
  // it left); the transport goes last, with the actors.
  node.add_shutdown_task(
    runtime::shutdown_phase::service_unbind, "remoting: quiet dead letters",
    [h = *handle](const runtime::shutdown_context&) { h.begin_shutdown(); });
  node.add_shutdown_task(
    runtime::shutdown_phase::actor_system_terminate, "remoting",
    [h = *handle](const runtime::shutdown_context&) { h.stop(); });
  return handle;
}

const unique_address& remoting_handle::local_address() const {
  TROUPE_ASSERT(sh_ != nullptr);
  return sh_->local;
}

remote_ref remoting_handle::local_ref(std::string name) const {
  return remote_ref{local_address(), std::move(name)};
}

const remoting_actor& remoting_handle::actor() const {
  TROUPE_ASSERT(sh_ != nullptr);
  return sh_->actor;
}

cluster::transport& remoting_handle::transport() const {
  TROUPE_ASSERT(sh_ != nullptr);
  return *sh_->transport;
}

namespace {

// What every send does once its addresses are checked: a target on this
// node gets `msg` through `here()` after the same type checks as a remote
// one; otherwise `header` writes the envelope's header, the message is
// encoded behind it and the frame goes to the transport. `refused` turns a
// type or encoding error into the sender's error (and logs it).
template <class Header, class Here, class Refused>
runtime::error transmit(detail::remoting_shared& sh, const unique_address& node,
                        lane lane, const caf::message& msg, Header&& header,
                        Here&& here, Refused&& refused) {
  if (is_local(sh, node)) {
    if (auto err = check_message(sh.sys, msg))
      return refused(std::move(err));
    here();
    sh.counters->sent.fetch_add(1, std::memory_order_relaxed);
    return {};
  }
  thread_local std::vector<char> buf;
  buf.clear();
  header(buf);
  if (auto err = encode_message(sh.sys, msg, buf))
    return refused(std::move(err));
  if (auto err = sh.transport->send(node, lane, std::as_bytes(std::span{buf})))
    return err;
  sh.counters->sent.fetch_add(1, std::memory_order_relaxed);
  return {};
}

} // namespace

runtime::error remoting_handle::send(const remote_ref& to,
                                     const caf::message& msg,
                                     const remote_ref& reply_to,
                                     lane lane) const {
  if (!sh_ || !sh_->running.load(std::memory_order_acquire))
    return not_running();
  auto& sh = *sh_;
  if (!to.is_addressable() || to.name.size() > max_name_size)
    return runtime::make_error(
      remoting_errc::invalid_ref,
      fmt::format("cannot send to \"{}\": not an addressable reference",
                  to_string(to)));
  if (!reply_to.name.empty() && reply_to.node != sh.local)
    return runtime::make_error(
      remoting_errc::invalid_ref,
      fmt::format("cannot send to {} with reply-to {}: a reply-to reference "
                  "must name an actor on this node ({})",
                  to_string(to), to_string(reply_to), to_string(sh.local)));
  return transmit(
    sh, to.node, lane, msg,
    [&](std::vector<char>& out) {
      append_message_header(out, to.name, reply_to.name);
    },
    [&] { deliver_locally(sh, to.name, msg, reply_to.name); },
    [&](runtime::error err) {
      err.message
        = fmt::format("cannot send to {}: {}", to_string(to), err.message);
      sh.log.warning("{}", err.message);
      return err;
    });
}

runtime::error remoting_handle::send_tagged(const unique_address& node,
                                            std::string_view name,
                                            std::string_view tag,
                                            const caf::message& body) const {
  if (!sh_ || !sh_->running.load(std::memory_order_acquire))
    return not_running();
  auto& sh = *sh_;
  auto invalid = [&](const char* why) {
    return runtime::make_error(
      remoting_errc::invalid_ref,
      fmt::format("cannot send a tagged message to \"{}\" on {}: {}",
                  name.substr(0, 64), to_string(node), why));
  };
  if (node.host.empty() || node.port == 0)
    return invalid("not an addressable node");
  if (name.empty() || name.size() > max_name_size)
    return invalid("the name is empty or longer than 255 bytes");
  if (tag.size() > max_tag_size)
    return invalid("the tag is longer than 65535 bytes");
  return transmit(
    sh, node, lane::ordinary, body,
    [&](std::vector<char>& out) { append_tagged_header(out, name, tag); },
    [&] { deliver_tagged_locally(sh, name, tag, body); },
    [&](runtime::error err) {
      err.message = fmt::format("cannot send a tagged message to \"{}\" on "
                                "{}: {}",
                                name, to_string(node), err.message);
      sh.log.warning("{}", err.message);
      return err;
    });
}

remote_ref remoting_handle::reply_ref(const caf::actor& actor) const {
  TROUPE_ASSERT(sh_ != nullptr);
  if (!actor)
    return remote_ref{sh_->local, {}};
  auto [name, added] = sh_->registry->expose(actor);
  if (added)
    caf::anon_send(sh_->actor, published_atom::value, name, actor);
  return remote_ref{sh_->local, std::move(name)};
}

runtime::expected<remote_ref>
remoting_handle::publish(const std::string& name,
                         const caf::actor& actor) const {
  return publish(name, actor, tagged_receiver{});
}

runtime::expected<remote_ref>
remoting_handle::publish(const std::string& name, const caf::actor& actor,
                         tagged_receiver receiver) const {
  if (!sh_ || !sh_->running.load(std::memory_order_acquire))
    return not_running();
  if (auto err = sh_->registry->add(
        name, actor,
        receiver ? std::make_shared<const tagged_receiver>(std::move(receiver))
                 : nullptr))
    return err;
  caf::anon_send(sh_->actor, published_atom::value, name, actor);
  return remote_ref{sh_->local, name};
}

bool remoting_handle::unpublish(const std::string& name) const {
  if (!sh_ || !sh_->registry->remove(name))
    return false;
  caf::anon_send(sh_->actor, unpublished_atom::value, name);
  return true;
}

runtime::error remoting_handle::watch(const remote_ref& ref,
                                      const caf::actor& watcher) const {
  if (!sh_ || !sh_->running.load(std::memory_order_acquire))
    return not_running();
  if (!ref.is_addressable() || ref.node.uid == 0
      || ref.name.size() > max_name_size)
    return runtime::make_error(
      remoting_errc::invalid_ref,
      fmt::format("cannot watch \"{}\": a watch needs a name and the node's "
                  "host, port and uid",
                  to_string(ref)));
  if (!watcher)
    return runtime::make_error(
      remoting_errc::invalid_actor,
      fmt::format("cannot watch {}: the watcher handle is invalid",
                  to_string(ref)));
  caf::anon_send(sh_->actor, watch_atom::value, ref, watcher);
  return {};
}

void remoting_handle::unwatch(const remote_ref& ref,
                              const caf::actor& watcher) const {
  if (sh_ && watcher)
    caf::anon_send(sh_->actor, unwatch_atom::value, ref, watcher);
}

void remoting_handle::node_removed(const unique_address& node,
                                   std::string reason,
                                   runtime::timespan quarantine_after) const {
  if (sh_ && node.uid != 0)
    caf::anon_send(sh_->actor, node_removed_atom::value, node,
                   std::move(reason), quarantine_after);
}

void remoting_handle::begin_shutdown() const {
  if (sh_)
    sh_->counters->shutting_down.store(true, std::memory_order_relaxed);
}

void remoting_handle::on_foreign_incarnation(
  foreign_incarnation_handler handler) const {
  if (sh_ && sh_->listener)
    sh_->listener->set_foreign_incarnation_handler(std::move(handler));
}

remoting_metrics remoting_handle::metrics() const {
  return sh_ ? sh_->counters->snapshot() : remoting_metrics{};
}

void remoting_handle::stop() const {
  if (!sh_ || !sh_->running.exchange(false))
    return;
  sh_->log.info("remoting stopping on {}", to_string(sh_->local));
  sh_->transport->shutdown();
  sh_->listener->detach();
  sh_->registry->clear();
  caf::anon_send_exit(sh_->actor, caf::exit_reason::user_shutdown);
}

} // namespace troupe::cluster
