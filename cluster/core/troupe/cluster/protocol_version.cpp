#include "troupe/cluster/protocol_version.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::cluster {

std::string to_string(protocol_version x) {
  return fmt::format("{}.{}", x.major, x.minor);
}

std::string protocol_mismatch(protocol_version local, protocol_version peer,
                              std::string_view who) {
  auto newer = std::max(local.major, peer.major);
  return fmt::format(
    "{} speaks troupe wire protocol {} and this node {}: nodes of different "
    "protocol majors cannot form one cluster. A rolling upgrade works only "
    "between releases of one protocol major: run this node with a release of "
    "protocol major {}, or move the whole cluster to major {} at once (stop "
    "every node, then start them with the new release); see "
    "docs/design/transport.md, \"Protocol versions\"",
    who, to_string(peer), to_string(local), peer.major, newer);
}

} // namespace troupe::cluster
