#include "troupe/management/peer_view.hpp"

#include <map>

namespace troupe::management {

namespace {

// Of two claims, the one with the higher token, then the lower address.
bool newer(uint64_t token, const std::string& node, uint64_t other_token,
           const std::string& other_node) {
  return token != other_token ? token > other_token : node < other_node;
}

} // namespace

std::vector<singleton_view>
merge_singletons(const std::vector<peer_view>& peers, std::string_view self) {
  struct pick {
    const peer_view* node = nullptr;
    const peer_singleton* s = nullptr;
  };
  std::map<std::string, pick> by_type;
  for (const auto& p : peers)
    for (const auto& s : p.singletons) {
      auto& cur = by_type[s.type];
      if (!s.running)
        continue;
      if (!cur.s
          || newer(s.fencing_token, p.node, cur.s->fencing_token,
                   cur.node->node))
        cur = pick{&p, &s};
    }
  std::vector<singleton_view> out;
  for (auto& [type, cur] : by_type) {
    singleton_view v;
    v.type = type;
    if (cur.s) {
      v.host = cur.node->node;
      v.running_here = cur.node->node == self;
      if (cur.s->fencing_token != 0)
        v.fencing_token = cur.s->fencing_token;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<lease_view> merge_leases(const std::vector<peer_view>& peers,
                                     std::string_view self) {
  struct pick {
    const peer_view* node = nullptr;
    const peer_lease* l = nullptr;
    int64_t ttl_ms = 0;
  };
  std::map<std::string, pick> by_name;
  for (const auto& p : peers)
    for (const auto& l : p.leases) {
      auto& cur = by_name[l.name];
      cur.ttl_ms = l.ttl_ms;
      if (!l.held)
        continue;
      if (!cur.l
          || newer(l.fencing_token, p.node, cur.l->fencing_token,
                   cur.node->node))
        cur = pick{&p, &l, l.ttl_ms};
    }
  std::vector<lease_view> out;
  for (auto& [name, cur] : by_name) {
    lease_view v;
    v.name = name;
    v.ttl = std::chrono::milliseconds{cur.ttl_ms};
    if (cur.l) {
      v.holder = cur.l->owner;
      v.held_here = cur.node->node == self;
      if (cur.l->fencing_token != 0)
        v.fencing_token = cur.l->fencing_token;
    }
    out.push_back(std::move(v));
  }
  return out;
}

uint64_t entities_of(const std::vector<peer_view>& peers, std::string_view node,
                     std::string_view type) {
  for (const auto& p : peers)
    if (p.node == node)
      for (const auto& r : p.regions)
        if (r.type == type)
          return r.entities;
  return 0;
}

} // namespace troupe::management
