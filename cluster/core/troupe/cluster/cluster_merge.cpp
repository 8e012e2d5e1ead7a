#include "troupe/cluster/cluster_merge.hpp"

#include <fmt/format.h>

#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

bool counts_for_size(member_status s) noexcept {
  return s == member_status::joining || s == member_status::weakly_up
         || s == member_status::up;
}

uint32_t cluster_size(const gossip& g) noexcept {
  uint32_t n = 0;
  for (const auto& m : g.members())
    if (counts_for_size(m.status))
      ++n;
  return n;
}

const char* to_string(merge_verdict x) noexcept {
  switch (x) {
    case merge_verdict::this_side_leaves:
      return "this_side_leaves";
    case merge_verdict::other_side_leaves:
      return "other_side_leaves";
  }
  return "unknown";
}

merge_verdict decide_merge(const cluster_side& self,
                           const cluster_side& other) {
  TROUPE_ASSERT(self.incarnation.is_set() && other.incarnation.is_set());
  TROUPE_ASSERT(self.incarnation != other.incarnation);
  if (self.size != other.size)
    return self.size < other.size ? merge_verdict::this_side_leaves
                                  : merge_verdict::other_side_leaves;
  return is_older(self.incarnation, other.incarnation)
           ? merge_verdict::other_side_leaves
           : merge_verdict::this_side_leaves;
}

std::string to_string(const foreign_cluster& x) {
  auto size
    = x.size ? fmt::format("{} members", *x.size) : std::string{"size unknown"};
  auto merging
    = x.merging_into.is_set()
        ? fmt::format(", leaving to join {}", to_string(x.merging_into))
        : std::string{};
  return fmt::format("{} ({}{}) via {}", to_string(x.incarnation), size,
                     merging, to_string(x.seen_via));
}

} // namespace troupe::cluster
