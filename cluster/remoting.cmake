# Remote references over the transport: remote_ref, the wire format of
# remoting payloads and the watch table (pure, in troupe_cluster_core), and
# the CAF shell (target troupe_cluster: remoting actor, handle, glue).
target_sources(troupe_cluster_core PRIVATE
  ${dir}/core/troupe/cluster/remote_ref.cpp
  ${dir}/core/troupe/cluster/remoting_wire.cpp
  ${dir}/core/troupe/cluster/watch_table.cpp)
