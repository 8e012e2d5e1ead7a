#include "troupe/cluster/quarantine.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/handshake.hpp"

namespace troupe::cluster {

bool quarantine_registry::contains(const entry& e, uint64_t uid) const {
  return std::find(e.quarantined.begin(), e.quarantined.end(), uid)
         != e.quarantined.end();
}

void quarantine_registry::add(entry& e, uint64_t uid) {
  e.quarantined.push_back(uid);
  while (e.quarantined.size() > max_per_endpoint_)
    e.quarantined.pop_front();
  if (e.current == uid)
    e.current.reset();
}

quarantine_registry::admission
quarantine_registry::admit(const unique_address& peer) {
  admission result;
  auto& e = entries_[endpoint_of(peer)];
  if (peer.uid == 0 || contains(e, peer.uid))
    return result;
  result.admitted = true;
  if (e.current && *e.current != peer.uid) {
    result.replaced = unique_address{peer.host, peer.port, *e.current};
    add(e, *e.current);
  }
  e.current = peer.uid;
  return result;
}

bool quarantine_registry::quarantine(const unique_address& peer) {
  if (peer.uid == 0)
    return false;
  auto& e = entries_[endpoint_of(peer)];
  if (contains(e, peer.uid))
    return false;
  add(e, peer.uid);
  return true;
}

bool quarantine_registry::is_quarantined(const unique_address& peer) const {
  auto i = entries_.find(endpoint_of(peer));
  return i != entries_.end() && contains(i->second, peer.uid);
}

std::optional<uint64_t>
quarantine_registry::current_uid(const endpoint& ep) const {
  auto i = entries_.find(ep);
  if (i == entries_.end())
    return std::nullopt;
  return i->second.current;
}

runtime::error check_send(const unique_address& local, const unique_address& to,
                          size_t payload_size, uint32_t max_frame_size,
                          const quarantine_registry& registry,
                          std::optional<uint64_t> established_uid) {
  if (payload_size > max_frame_size)
    return runtime::make_error(
      errc::frame_too_large,
      fmt::format("frame of {} bytes to {} exceeds max_frame_size {}",
                  payload_size, to_string(to), max_frame_size));
  if (to.host.empty() || to.host.size() > max_name_size || to.port == 0)
    return runtime::make_error(errc::invalid_destination,
                               fmt::format("cannot send to {}: needs a host "
                                           "of 1 to {} bytes and a port",
                                           to_string(to), max_name_size));
  if (endpoint_of(to) == endpoint_of(local))
    return runtime::make_error(errc::invalid_destination,
                               fmt::format("cannot send to {}: that is this "
                                           "node's own endpoint",
                                           to_string(to)));
  if (registry.is_quarantined(to))
    return runtime::make_error(errc::quarantined,
                               fmt::format("cannot send to {}: the uid is "
                                           "quarantined",
                                           to_string(to)));
  if (to.uid != 0 && established_uid && *established_uid != to.uid)
    return runtime::make_error(
      errc::incarnation_mismatch,
      fmt::format("cannot send to {}: {} is connected to incarnation {}",
                  to_string(to), to_string(endpoint_of(to)), *established_uid));
  return {};
}

} // namespace troupe::cluster
