#include "troupe/cluster/transport.hpp"

#include <algorithm>
#include <numeric>

namespace troupe::cluster {

endpoint endpoint_of(const unique_address& x) {
  return endpoint{x.host, x.port};
}

std::string to_string(const endpoint& x) {
  // The unique_address form without "#uid": one rule for brackets.
  auto result = runtime::to_string(unique_address{x.host, x.port, 0});
  result.erase(result.rfind('#'));
  return result;
}

const char* to_string(lane x) noexcept {
  return x == lane::control ? "control" : "ordinary";
}

const char* to_string(direction x) noexcept {
  return x == direction::outbound ? "outbound" : "inbound";
}

const char* to_string(drop_reason x) noexcept {
  switch (x) {
    case drop_reason::queue_overflow:
      return "queue_overflow";
    case drop_reason::quarantined:
      return "quarantined";
    case drop_reason::incarnation_mismatch:
      return "incarnation_mismatch";
    case drop_reason::connection_lost:
      return "connection_lost";
    case drop_reason::blackholed:
      return "blackholed";
    case drop_reason::injected:
      return "injected";
    case drop_reason::undecodable:
      return "undecodable";
    case drop_reason::shutdown:
      return "shutdown";
  }
  return "unknown";
}

uint64_t peer_counters::dropped() const noexcept {
  return std::accumulate(drops.begin(), drops.end(), uint64_t{0});
}

void peer_counters::add(const peer_counters& other) noexcept {
  bytes_out += other.bytes_out;
  messages_out += other.messages_out;
  bytes_in += other.bytes_in;
  messages_in += other.messages_in;
  reconnects += other.reconnects;
  handshake_failures += other.handshake_failures;
  protocol_violations += other.protocol_violations;
  for (size_t i = 0; i < drop_reason_count; ++i)
    drops[i] += other.drops[i];
}

const peer_metrics* transport_metrics::find(const endpoint& peer) const {
  auto i = std::find_if(peers.begin(), peers.end(),
                        [&](const peer_metrics& x) { return x.peer == peer; });
  return i == peers.end() ? nullptr : &*i;
}

transport_listener::~transport_listener() = default;

void transport_listener::on_frames(const unique_address& from,
                                   std::span<const received_frame> frames) {
  for (const auto& f : frames)
    on_frame(from, f.lane, f.payload);
}

void transport_listener::on_dropped(const unique_address&, lane, drop_reason,
                                    uint64_t) {
  // Metrics count every drop; listeners opt in to reports.
}

void transport_listener::on_foreign_incarnation(const unique_address&,
                                                const cluster_incarnation&) {
  // Most listeners (tests, benchmarks) do not care.
}

transport::~transport() = default;

} // namespace troupe::cluster
