#include "troupe/chaos/nemesis_rules.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "troupe/cluster/phi_accrual_detector.hpp"

namespace troupe::chaos {

using std::chrono::milliseconds;

hold_range nemesis_rules::hold(fault_kind kind) const noexcept {
  switch (kind) {
    case fault_kind::kill:
    case fault_kind::majority_restart:
      return kill;
    case fault_kind::slow_restart:
      return {kill.min + slow_links.min, kill.max + slow_links.max};
    case fault_kind::pause:
      return pause;
    case fault_kind::partition_symmetric:
    case fault_kind::partition_asymmetric:
      return partition;
    case fault_kind::etcd_stop:
    case fault_kind::etcd_slow:
      return etcd;
    case fault_kind::lease_delete:
      break;
  }
  return {};
}

runtime::expected<nemesis_rules> rules_of(const nemesis_timing& t) {
  std::pair<const char*, milliseconds> positive[] = {
    {"heartbeat_interval", t.heartbeat_interval},
    {"acceptable_heartbeat_pause", t.acceptable_heartbeat_pause},
    {"min_std_deviation", t.min_std_deviation},
    {"stable_after", t.stable_after},
    {"down_all_when_unstable", t.down_all_when_unstable},
    {"lease_ttl", t.lease_ttl},
    {"gossip_interval", t.gossip_interval},
  };
  for (auto& [name, value] : positive)
    if (value.count() <= 0)
      return detail::nemesis_input_error(
        fmt::format("timing: {} {}ms must be > 0", name, value.count()));
  if (!(t.threshold > 0))
    return detail::nemesis_input_error(
      fmt::format("timing: threshold {} must be > 0", t.threshold));
  if (t.slack.count() < 0 || t.etcd_delay_min.count() < 0
      || t.link_delay_min.count() < 0)
    return detail::nemesis_input_error(fmt::format(
      "timing: slack {}ms, etcd_delay_min {}ms and link_delay_min {}ms must "
      "be >= 0",
      t.slack.count(), t.etcd_delay_min.count(), t.link_delay_min.count()));
  for (auto [name, lo, hi] :
       {std::tuple{"etcd", t.etcd_delay_min, t.etcd_delay_max},
        std::tuple{"link", t.link_delay_min, t.link_delay_max}})
    if (lo > hi)
      return detail::nemesis_input_error(
        fmt::format("timing: {}_delay_min {}ms is above {}_delay_max {}ms",
                    name, lo.count(), name, hi.count()));
  cluster::phi_accrual_settings phi;
  phi.threshold = t.threshold;
  phi.min_std_deviation = t.min_std_deviation;
  phi.acceptable_heartbeat_pause = t.acceptable_heartbeat_pause;
  nemesis_rules r;
  r.detection = std::chrono::ceil<milliseconds>(
    cluster::detection_time(phi, cluster::fractional_ms{t.heartbeat_interval},
                            cluster::fractional_ms{0}));
  r.downed = r.detection + t.stable_after;
  r.removal_margin = t.stable_after + t.down_all_when_unstable;
  r.quiet_after
    = r.downed + t.down_all_when_unstable + 5 * t.gossip_interval + t.slack;
  r.recovery = r.downed + r.removal_margin + t.lease_ttl + t.slack;
  r.kill = {r.detection, 2 * r.downed + t.slack};
  auto p = std::max(r.downed, t.lease_ttl) + t.slack;
  r.pause = {p, 2 * p};
  r.partition = {r.downed + t.slack, 2 * (r.downed + t.slack)};
  r.etcd = {t.lease_ttl + t.slack, 2 * (t.lease_ttl + t.slack)};
  r.slow_links = {r.downed + t.slack, 2 * (r.downed + t.slack)};
  return r;
}

size_t minority_of(size_t nodes) noexcept {
  return nodes == 0 ? 0 : (nodes - 1) / 2;
}

size_t majority_of(size_t nodes) noexcept {
  return nodes / 2 + 1;
}

milliseconds least_duration(const nemesis_rules& rules,
                            const std::vector<fault_kind>& kinds) {
  milliseconds longest{0};
  for (auto k : kinds)
    longest = std::max(longest, rules.hold(k).min);
  return rules.recovery * 3 / 2 + longest;
}

} // namespace troupe::chaos
