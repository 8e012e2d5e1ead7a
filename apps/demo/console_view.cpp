#include "console_view.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::demo {

namespace {

std::string ms_text(std::chrono::microseconds d) {
  return fmt::format("{}ms", d.count() / 1000);
}

} // namespace

std::string members_line(const cluster_snapshot& snap, const namer& name) {
  auto sorted = snap.members;
  // Up number 0: never Up (joining), after the others.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const member_row& a, const member_row& b) {
                     auto key = [](const member_row& m) {
                       return std::make_pair(m.up_number == 0, m.up_number);
                     };
                     if (key(a) != key(b))
                       return key(a) < key(b);
                     return a.address < b.address;
                   });
  std::string members;
  for (auto& m : sorted) {
    std::vector<std::string> roles;
    if (snap.oldest == m.address)
      roles.emplace_back("oldest");
    if (snap.leader == m.address)
      roles.emplace_back("leader");
    members += fmt::format(
      "{}{} {}{}", members.empty() ? "" : ", ", name(m.address),
      m.reachable ? m.status : m.status + " unreachable",
      roles.empty() ? "" : fmt::format(" ({})", fmt::join(roles, ", ")));
  }
  return "members (by up number): " + (members.empty() ? "none" : members);
}

std::string singleton_line(const cluster_snapshot& snap, const namer& name) {
  auto host
    = snap.singleton_host ? name(*snap.singleton_host) : "none reported";
  auto holder = snap.lease_holder ? name(*snap.lease_holder) : "none reported";
  auto token = [](const std::optional<uint64_t>& t) {
    return t ? fmt::format(" token {}", *t) : std::string{};
  };
  return fmt::format("singleton scheduler: {}{} | its lease: {}{}", host,
                     snap.singleton_host ? token(snap.singleton_token) : "",
                     holder, snap.lease_holder ? token(snap.lease_token) : "");
}

std::string shards_text(const cluster_snapshot& snap, const namer& name) {
  if (!snap.shards_answered)
    return "shards: no answer";
  // By node name (the members line's order changes with the up numbers;
  // this one stays put from line to line).
  std::vector<std::pair<std::string, size_t>> counts;
  size_t total = 0;
  for (auto& [address, ids] : snap.shards) {
    counts.emplace_back(name(address), ids.size());
    total += ids.size();
  }
  if (total == 0)
    return "shards none allocated yet";
  std::sort(counts.begin(), counts.end());
  std::string out = "shards";
  for (auto& [node, n] : counts)
    out += fmt::format("{} {} {}", out.size() == 6 ? "" : ",", node, n);
  return out;
}

double acks_per_second(const client::load_counters& before,
                       const client::load_counters& now) {
  auto seconds = std::chrono::duration<double>(now.at - before.at).count();
  if (seconds <= 0 || now.acked < before.acked)
    return 0;
  return static_cast<double>(now.acked - before.acked) / seconds;
}

std::string client_text(const client::load_counters& before,
                        const client::load_counters& now) {
  auto seconds = std::chrono::duration<double>(now.at - before.at).count();
  auto text = fmt::format(
    "client {} acked (+{} in {:.2f}s: {:.0f}/s), {} failed, {} in flight",
    now.acked, now.acked >= before.acked ? now.acked - before.acked : 0,
    seconds, acks_per_second(before, now), now.failed, now.in_flight);
  if (now.behind > 0)
    text += fmt::format(", {} behind schedule", now.behind);
  text += now.recent_p99.count() > 0
            ? fmt::format(", p99 {} (last {}s)", ms_text(now.recent_p99),
                          now.recent_seconds)
            : fmt::format(", no ack in the last {}s", now.recent_seconds);
  return text;
}

console_view::console_view(runtime::timespan status_interval)
  : interval_(status_interval) {}

std::vector<std::string>
console_view::on_poll(const cluster_snapshot& snap,
                      const std::optional<client::load_counters>& client,
                      runtime::timespan now, const namer& name) {
  std::vector<std::string> lines;
  if (snap.members_answered) {
    auto members = members_line(snap, name);
    if (members != members_)
      lines.push_back(members_ = members);
    auto singleton = singleton_line(snap, name);
    if (singleton != singleton_)
      lines.push_back(singleton_ = singleton);
  }
  if (last_status_ && now - *last_status_ < interval_ - interval_ / 10)
    return lines;
  last_status_ = now;
  auto status = snap.members_answered
                  ? fmt::format("status: {} up | {}", snap.up_count(),
                                shards_text(snap, name))
                  : std::string{"status: no node answered the poll within 1s"};
  if (client) {
    status += " | " + client_text(client_before_, *client);
    best_rate_ = std::max(best_rate_, acks_per_second(client_before_, *client));
    client_before_ = *client;
  }
  lines.push_back(std::move(status));
  return lines;
}

} // namespace troupe::demo
