#include "troupe/cluster/caf_glue.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/inbound_actor.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/remote_down.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/remoting_actor.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_events.hpp"
#include "troupe/cluster/transport_config.hpp"
#include "troupe/runtime/caf_glue.hpp"

namespace troupe::cluster {

void add_cluster_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<remote_ref>("troupe.cluster.remote_ref");
  cfg.add_message_type<remote_down>("troupe.cluster.remote_down");
  cfg.add_message_type<remoting_status>("troupe.cluster.remoting_status");
  cfg.add_message_type<control_received>("troupe.cluster.control_received");
  cfg.add_message_type<peer_event>("troupe.cluster.peer_event");
  cfg.add_message_type<detail::inbound_batch>("troupe.cluster.inbound_batch");
  runtime::add_error_category<errc>(cfg);
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
