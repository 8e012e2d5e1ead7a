#include "troupe/cluster/heartbeat_ring.hpp"

#include <algorithm>

#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

namespace {

constexpr uint64_t fnv_offset_basis = 14695981039346656037ull;
constexpr uint64_t fnv_prime = 1099511628211ull;

void mix_byte(uint64_t& h, uint8_t byte) noexcept {
  h ^= byte;
  h *= fnv_prime;
}

void mix_big_endian(uint64_t& h, uint64_t value, int bytes) noexcept {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
    mix_byte(h, static_cast<uint8_t>(value >> shift));
}

// A position on the ring: by hash, ties (practically never) by address.
using ring_key = std::pair<uint64_t, const unique_address*>;

bool ring_less(const ring_key& a, const ring_key& b) {
  return a.first < b.first || (a.first == b.first && *a.second < *b.second);
}

} // namespace

uint64_t ring_hash(const unique_address& x) noexcept {
  auto h = fnv_offset_basis;
  for (char c : x.host)
    mix_byte(h, static_cast<uint8_t>(c));
  mix_byte(h, 0);
  mix_big_endian(h, x.port, 2);
  mix_big_endian(h, x.uid, 8);
  // splitmix64's finalizer: FNV-1a leaves the last bytes poorly mixed.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

heartbeat_node_ring::heartbeat_node_ring(unique_address self,
                                         std::set<unique_address> nodes,
                                         std::set<unique_address> unreachable,
                                         size_t monitored_by_nr_of_members)
  : self_(std::move(self)), nodes_(std::move(nodes)),
    unreachable_(std::move(unreachable)),
    monitored_by_nr_of_members_(monitored_by_nr_of_members) {
  TROUPE_ASSERT(monitored_by_nr_of_members >= 1);
  nodes_.insert(self_);
  rebuild();
}

std::set<unique_address>
heartbeat_node_ring::receivers(const unique_address& sender) const {
  std::set<unique_address> result;
  if (monitored_by_nr_of_members_ + 1 >= ring_.size()) {
    for (const auto& node : ring_)
      if (node != sender)
        result.insert(node);
    return result;
  }
  // Walk once around the ring, starting after the sender's position.
  auto first = static_cast<size_t>(
    std::upper_bound(
      ring_.begin(), ring_.end(), sender,
      [&](const unique_address& x, const unique_address& node) {
        return ring_less({ring_hash(x), &x}, {ring_hash(node), &node});
      })
    - ring_.begin());
  auto wanted = monitored_by_nr_of_members_;
  for (size_t step = 0; step < ring_.size() && wanted > 0; ++step) {
    auto i = (first + step) % ring_.size();
    const auto& node = ring_[i];
    if (node == sender)
      continue;
    if (unreachable_.count(node) == 0) {
      result.insert(node);
      --wanted;
    } else if (result.size() < monitored_by_nr_of_members_) {
      // Taken, but not counted: see the header.
      result.insert(node);
    }
  }
  return result;
}

void heartbeat_node_ring::add(const unique_address& node) {
  if (nodes_.insert(node).second)
    rebuild();
}

void heartbeat_node_ring::remove(const unique_address& node) {
  TROUPE_ASSERT(node != self_);
  auto erased = nodes_.erase(node) + unreachable_.erase(node);
  if (erased > 0)
    rebuild();
}

void heartbeat_node_ring::set_unreachable(const unique_address& node,
                                          bool unreachable) {
  auto changed = unreachable ? unreachable_.insert(node).second
                             : unreachable_.erase(node) > 0;
  if (changed)
    rebuild();
}

void heartbeat_node_ring::reset(std::set<unique_address> nodes,
                                std::set<unique_address> unreachable) {
  nodes_ = std::move(nodes);
  nodes_.insert(self_);
  unreachable_ = std::move(unreachable);
  rebuild();
}

void heartbeat_node_ring::rebuild() {
  std::vector<ring_key> keys;
  keys.reserve(nodes_.size());
  for (const auto& node : nodes_)
    keys.emplace_back(ring_hash(node), &node);
  std::sort(keys.begin(), keys.end(), ring_less);
  ring_.clear();
  for (const auto& key : keys)
    ring_.push_back(*key.second);
  my_receivers_ = receivers(self_);
}

} // namespace troupe::cluster
