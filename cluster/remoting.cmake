# Remote references over the transport: remote_ref, the wire format of
# remoting payloads and the watch table (pure, in troupe_cluster_core), and
# the CAF shell (target troupe_cluster: remoting actor, handle, glue).
target_sources(troupe_cluster_core PRIVATE
  ${dir}/core/troupe/cluster/remote_ref.cpp
  ${dir}/core/troupe/cluster/remoting_wire.cpp
  ${dir}/core/troupe/cluster/watch_table.cpp)

troupe_library(NAME troupe_cluster DIR ${dir}/shell
  SOURCES
    ${dir}/shell/troupe/cluster/caf_glue.cpp
    ${dir}/shell/troupe/cluster/frame_dispatcher.cpp
    ${dir}/shell/troupe/cluster/inbound_actor.cpp
    ${dir}/shell/troupe/cluster/message_codec.cpp
    ${dir}/shell/troupe/cluster/published_registry.cpp
    ${dir}/shell/troupe/cluster/remoting.cpp
    ${dir}/shell/troupe/cluster/remoting_actor.cpp
    ${dir}/shell/troupe/cluster/remoting_listener.cpp
  LINK troupe_cluster_edge troupe_runtime)
