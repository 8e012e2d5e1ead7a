// /metrics: the snapshot in the Prometheus text format, every documented
// name (docs/design/management.md, "Metrics") with its labels and value.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "troupe/management/metrics.hpp"

using namespace troupe::management;

namespace {

// The value of the sample line that starts with `series` (name and labels
// exactly as rendered), or -1.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  return -1;
}

} // namespace

TEST_CASE("management: the metrics text carries every documented series") {
  metrics_snapshot s;
  s.members_by_status = {{"up", 3}, {"leaving", 1}, {"down", 0}};
  s.unreachable_members = 1;
  s.leader_changes = 2;
  s.foreign_incarnations = 1;
  s.foreign_incarnation_detections = 3;
  s.gossip_rounds = 1234;
  s.gossip_received = 1200;
  s.leases = {{"troupe-singleton-jobs", 3, 1}};
  s.singletons_running = {{"jobs", true}, {"sharding.acct", false}};
  s.regions = {{"acct", 33, 400, 10000, 2500, 7, 1}};
  s.remoting_sent = 5000;
  s.remoting_delivered = 4900;
  s.remoting_dead_letters = 2;
  s.transport_bytes_out = 1 << 20;
  s.transport_bytes_in = 1 << 19;
  s.transport_drops = {{"queue_overflow", 4}, {"blackholed", 0}};
  auto text = render_metrics(s);
  INFO(text);
  CHECK(text.find("# TYPE troupe_cluster_members gauge") != std::string::npos);
  CHECK(text.find("# TYPE troupe_cluster_leader_changes_total counter")
        != std::string::npos);
  CHECK(sample(text, "troupe_cluster_members{status=\"up\"}") == 3);
  CHECK(sample(text, "troupe_cluster_members{status=\"leaving\"}") == 1);
  CHECK(sample(text, "troupe_cluster_members{status=\"down\"}") == 0);
  CHECK(sample(text, "troupe_cluster_unreachable_members") == 1);
  CHECK(sample(text, "troupe_cluster_leader_changes_total") == 2);
  CHECK(text.find("# TYPE troupe_cluster_foreign_incarnations gauge")
        != std::string::npos);
  CHECK(sample(text, "troupe_cluster_foreign_incarnations") == 1);
  CHECK(text.find("# TYPE troupe_cluster_foreign_incarnation_detections_total "
                  "counter")
        != std::string::npos);
  CHECK(sample(text, "troupe_cluster_foreign_incarnation_detections_total")
        == 3);
  CHECK(sample(text, "troupe_cluster_gossip_rounds_total") == 1234);
  CHECK(sample(text, "troupe_cluster_gossip_received_total") == 1200);
  CHECK(
    sample(text,
           "troupe_lease_acquisitions_total{name=\"troupe-singleton-jobs\"}")
    == 3);
  CHECK(
    sample(text, "troupe_lease_losses_total{name=\"troupe-singleton-jobs\"}")
    == 1);
  CHECK(sample(text, "troupe_singleton_running{type=\"jobs\"}") == 1);
  CHECK(sample(text, "troupe_singleton_running{type=\"sharding.acct\"}") == 0);
  CHECK(sample(text, "troupe_sharding_shards{type=\"acct\"}") == 33);
  CHECK(sample(text, "troupe_sharding_entities{type=\"acct\"}") == 400);
  CHECK(
    sample(text, "troupe_sharding_messages_total{path=\"local\",type=\"acct\"}")
    == 10000);
  CHECK(
    sample(text,
           "troupe_sharding_messages_total{path=\"forwarded\",type=\"acct\"}")
    == 2500);
  CHECK(
    sample(text,
           "troupe_sharding_messages_total{path=\"buffered\",type=\"acct\"}")
    == 7);
  CHECK(sample(text,
               "troupe_sharding_messages_total{path=\"dropped\",type=\"acct\"}")
        == 1);
  CHECK(sample(text, "troupe_remoting_messages_total{direction=\"out\"}")
        == 5000);
  CHECK(sample(text, "troupe_remoting_messages_total{direction=\"in\"}")
        == 4900);
  CHECK(sample(text, "troupe_remoting_dead_letters_total") == 2);
  CHECK(sample(text, "troupe_transport_bytes_total{direction=\"out\"}")
        == 1 << 20);
  CHECK(sample(text, "troupe_transport_bytes_total{direction=\"in\"}")
        == 1 << 19);
  CHECK(sample(text, "troupe_transport_drops_total{reason=\"queue_overflow\"}")
        == 4);
  CHECK(sample(text, "troupe_transport_drops_total{reason=\"blackholed\"}")
        == 0);
  // Not shutting down: every phase is listed with 0.
  CHECK(
    sample(text, "troupe_coordinated_shutdown_phase{phase=\"cluster_leave\"}")
    == 0);
}

TEST_CASE("management: the metrics name the coordinated shutdown's running "
          "phase") {
  metrics_snapshot s;
  s.shutdown_phase = troupe::runtime::shutdown_phase::cluster_exiting;
  auto text = render_metrics(s);
  CHECK(
    sample(text, "troupe_coordinated_shutdown_phase{phase=\"cluster_exiting\"}")
    == 1);
  size_t ones = 0;
  for (auto p : troupe::runtime::all_shutdown_phases())
    ones += sample(text, "troupe_coordinated_shutdown_phase{phase=\""
                           + std::string{troupe::runtime::to_string(p)} + "\"}")
            == 1;
  CHECK(ones == 1);
}

TEST_CASE("management: label values are escaped in the metrics text") {
  metrics_snapshot s;
  s.leases = {{"a\"b\\c", 1, 0}};
  auto text = render_metrics(s);
  CHECK(text.find("troupe_lease_acquisitions_total{name=\"a\\\"b\\\\c\"} 1")
        != std::string::npos);
}
