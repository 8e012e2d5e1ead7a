#include "troupe/cluster/quarantine.hpp"

#include <algorithm>

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

} // namespace troupe::cluster
