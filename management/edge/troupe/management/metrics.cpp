#include "troupe/management/metrics.hpp"

#include <sstream>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace troupe::management {

namespace {

using prometheus::Labels;
using prometheus::Registry;

// A family built from scratch at each scrape: counters start at 0, so one
// Increment by the module's total gives the total.
void counter(Registry& reg, const std::string& name, const std::string& help,
             const std::vector<std::pair<Labels, uint64_t>>& values) {
  auto& fam = prometheus::BuildCounter().Name(name).Help(help).Register(reg);
  for (const auto& [labels, v] : values)
    fam.Add(labels).Increment(static_cast<double>(v));
}

void gauge(Registry& reg, const std::string& name, const std::string& help,
           const std::vector<std::pair<Labels, uint64_t>>& values) {
  auto& fam = prometheus::BuildGauge().Name(name).Help(help).Register(reg);
  for (const auto& [labels, v] : values)
    fam.Add(labels).Set(static_cast<double>(v));
}

} // namespace

std::string render_metrics(const metrics_snapshot& s) {
  Registry reg;
  std::vector<std::pair<Labels, uint64_t>> members;
  for (const auto& [status, n] : s.members_by_status)
    members.push_back({{{"status", status}}, n});
  gauge(reg, "troupe_cluster_members", "Members of this node's view by status",
        members);
  gauge(reg, "troupe_cluster_unreachable_members",
        "Members some member observes unreachable",
        {{{}, s.unreachable_members}});
  counter(reg, "troupe_cluster_leader_changes_total",
          "Leader changes this node saw", {{{}, s.leader_changes}});
  gauge(reg, "troupe_cluster_foreign_incarnations",
        "Other clusters of this cluster's name this node met and has not "
        "forgotten (two clusters formed apart; one leaves and rejoins the "
        "other)",
        {{{}, s.foreign_incarnations}});
  counter(reg, "troupe_cluster_foreign_incarnation_detections_total",
          "Meetings with another cluster of this name (first sightings of a "
          "foreign cluster incarnation)",
          {{{}, s.foreign_incarnation_detections}});
  counter(reg, "troupe_cluster_gossip_rounds_total",
          "Full gossip messages sent (a round whose target already has this "
          "version sends only a status, not counted)",
          {{{}, s.gossip_rounds}});
  counter(reg, "troupe_cluster_gossip_received_total",
          "Gossip messages received", {{{}, s.gossip_received}});
  std::vector<std::pair<Labels, uint64_t>> acq, lost;
  for (const auto& l : s.leases) {
    acq.push_back({{{"name", l.name}}, l.acquisitions});
    lost.push_back({{{"name", l.name}}, l.losses});
  }
  counter(reg, "troupe_lease_acquisitions_total",
          "Lease acquisitions (each a new fencing token)", acq);
  counter(reg, "troupe_lease_losses_total",
          "Leases lost (lease_lost published)", lost);
  std::vector<std::pair<Labels, uint64_t>> running;
  for (const auto& [type, on] : s.singletons_running)
    running.push_back({{{"type", type}}, on ? uint64_t{1} : uint64_t{0}});
  gauge(reg, "troupe_singleton_running",
        "1 if this node runs the singleton's instance", running);
  std::vector<std::pair<Labels, uint64_t>> shards, entities, messages;
  for (const auto& r : s.regions) {
    shards.push_back({{{"type", r.type}}, r.shards});
    entities.push_back({{{"type", r.type}}, r.entities});
    messages.push_back({{{"type", r.type}, {"path", "local"}}, r.delivered});
    messages.push_back(
      {{{"type", r.type}, {"path", "forwarded"}}, r.forwarded});
    messages.push_back({{{"type", r.type}, {"path", "buffered"}}, r.buffered});
    messages.push_back({{{"type", r.type}, {"path", "dropped"}}, r.dropped});
  }
  gauge(reg, "troupe_sharding_shards", "Shards hosted here", shards);
  gauge(reg, "troupe_sharding_entities", "Entities running here", entities);
  counter(reg, "troupe_sharding_messages_total",
          "Messages by what the region did with them", messages);
  counter(reg, "troupe_remoting_messages_total",
          "Remote messages sent and delivered",
          {{{{"direction", "out"}}, s.remoting_sent},
           {{{"direction", "in"}}, s.remoting_delivered}});
  counter(reg, "troupe_remoting_dead_letters_total",
          "Remote messages for a name nothing is published under",
          {{{}, s.remoting_dead_letters}});
  counter(reg, "troupe_transport_bytes_total",
          "Bytes written to and read from the cluster transport",
          {{{{"direction", "out"}}, s.transport_bytes_out},
           {{{"direction", "in"}}, s.transport_bytes_in}});
  std::vector<std::pair<Labels, uint64_t>> drops;
  for (const auto& [reason, n] : s.transport_drops)
    drops.push_back({{{"reason", reason}}, n});
  counter(reg, "troupe_transport_drops_total",
          "Frames the transport dropped, by reason", drops);
  std::vector<std::pair<Labels, uint64_t>> phases;
  for (auto p : runtime::all_shutdown_phases())
    phases.push_back({{{"phase", std::string{runtime::to_string(p)}}},
                      s.shutdown_phase == p ? uint64_t{1} : uint64_t{0}});
  gauge(reg, "troupe_coordinated_shutdown_phase",
        "1 for the coordinated shutdown's phase running now (all 0: not "
        "shutting down)",
        phases);
  std::ostringstream out;
  prometheus::TextSerializer{}.Serialize(out, reg.Collect());
  return out.str();
}

} // namespace troupe::management
