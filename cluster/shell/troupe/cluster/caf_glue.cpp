#include "troupe/cluster/caf_glue.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include "troupe/cluster/cluster_daemon.hpp"
#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/inbound_actor.hpp"
#include "troupe/cluster/membership_errc.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/remote_down.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/remoting_actor.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_events.hpp"
#include "troupe/cluster/transport_config.hpp"
#include "troupe/runtime/caf_glue.hpp"

namespace troupe::cluster {

namespace {

// Membership values, messages and events (every alternative of
// membership_message and cluster_event travels as itself).
void add_membership_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<endpoint>("troupe.cluster.endpoint");
  cfg.add_message_type<std::vector<endpoint>>("troupe.cluster.endpoints");
  cfg.add_message_type<member>("troupe.cluster.member");
  cfg.add_message_type<vector_clock>("troupe.cluster.vector_clock");
  cfg.add_message_type<reachability_record>(
    "troupe.cluster.reachability_record");
  cfg.add_message_type<reachability>("troupe.cluster.reachability");
  cfg.add_message_type<gossip_overview>("troupe.cluster.gossip_overview");
  cfg.add_message_type<gossip>("troupe.cluster.gossip");
  cfg.add_message_type<config_mismatch>("troupe.cluster.config_mismatch");
  cfg.add_message_type<compat_result>("troupe.cluster.compat_result");
  cfg.add_message_type<init_join>("troupe.cluster.init_join");
  cfg.add_message_type<init_join_ack>("troupe.cluster.init_join_ack");
  cfg.add_message_type<init_join_nack>("troupe.cluster.init_join_nack");
  cfg.add_message_type<cluster::join>("troupe.cluster.join");
  cfg.add_message_type<welcome_gossip>("troupe.cluster.welcome_gossip");
  cfg.add_message_type<gossip_envelope>("troupe.cluster.gossip_envelope");
  cfg.add_message_type<gossip_status>("troupe.cluster.gossip_status");
  cfg.add_message_type<heartbeat>("troupe.cluster.heartbeat");
  cfg.add_message_type<heartbeat_response>("troupe.cluster.heartbeat_response");
  cfg.add_message_type<exiting_confirmed>("troupe.cluster.exiting_confirmed");
  cfg.add_message_type<cluster_incarnation>(
    "troupe.cluster.cluster_incarnation");
  cfg.add_message_type<cluster_info>("troupe.cluster.cluster_info");
  cfg.add_message_type<incarnation_probe>("troupe.cluster.incarnation_probe");
  cfg.add_message_type<incarnation_probe_answer>(
    "troupe.cluster.incarnation_probe_answer");
  cfg.add_message_type<member_joined>("troupe.cluster.member_joined");
  cfg.add_message_type<member_weakly_up>("troupe.cluster.member_weakly_up");
  cfg.add_message_type<member_up>("troupe.cluster.member_up");
  cfg.add_message_type<member_left>("troupe.cluster.member_left");
  cfg.add_message_type<member_exited>("troupe.cluster.member_exited");
  cfg.add_message_type<member_downed>("troupe.cluster.member_downed");
  cfg.add_message_type<member_removed>("troupe.cluster.member_removed");
  cfg.add_message_type<unreachable_member>("troupe.cluster.unreachable_member");
  cfg.add_message_type<reachable_member>("troupe.cluster.reachable_member");
  cfg.add_message_type<leader_changed>("troupe.cluster.leader_changed");
  cfg.add_message_type<role_leader_changed>(
    "troupe.cluster.role_leader_changed");
  cfg.add_message_type<current_cluster_state>(
    "troupe.cluster.current_cluster_state");
}

} // namespace

void add_cluster_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<remote_ref>("troupe.cluster.remote_ref");
  cfg.add_message_type<remote_down>("troupe.cluster.remote_down");
  cfg.add_message_type<remoting_status>("troupe.cluster.remoting_status");
  cfg.add_message_type<control_received>("troupe.cluster.control_received");
  cfg.add_message_type<peer_event>("troupe.cluster.peer_event");
  cfg.add_message_type<detail::inbound_batch>("troupe.cluster.inbound_batch");
  add_membership_types(cfg);
  runtime::add_error_category<errc>(cfg);
  runtime::add_error_category<membership_errc>(cfg);
  runtime::add_error_category<remoting_errc>(cfg);
}

void declare_cluster_config(runtime::config_schema& schema) {
  declare_transport_config(schema);
  declare_membership_config(schema);
  schema.add(runtime::make_config_key(
    "cluster.remoting.down_flush_timeout", runtime::config_type::duration, "3s",
    "How long a remote watch's down notification that came on the control "
    "lane waits for its copy on the ordinary lane (which keeps it behind "
    "the stopped actor's last messages) before it fires anyway."));
  schema.add(runtime::make_config_key(
    "cluster.remoting.deliver_on_io_thread", runtime::config_type::boolean,
    "false",
    "Decode incoming messages on the transport's io thread instead of in "
    "one inbound actor per peer (which keeps the io thread free for "
    "heartbeats and decodes the peers in parallel)."));
}

runtime::module cluster_module() {
  return runtime::module{"cluster", declare_cluster_config, add_cluster_types};
}

} // namespace troupe::cluster
