#include "demo_poll.hpp"

namespace troupe::demo {

cluster_snapshot poll_cluster(demo_cluster& cluster, http_getter& http,
                              const std::set<std::string>& cut_off) {
  std::vector<std::string> bases;
  for (auto& n : cluster.nodes())
    if (auto* p = cluster.procs().find(n.name);
        p && p->running() && cut_off.count(n.name) == 0)
      bases.push_back(cluster.management_url(n));
  std::vector<std::string> urls;
  for (auto& b : bases) {
    urls.push_back(b + "/cluster/members");
    urls.push_back(b + "/cluster/shards/account");
    urls.push_back(b + "/singletons");
    urls.push_back(b + "/leases");
  }
  auto answers = http.get_all(urls, std::chrono::seconds{1});
  cluster_snapshot snap;
  bool have_members = false;
  bool have_shards = false;
  for (size_t i = 0; i + 3 < answers.size(); i += 4) {
    auto ok = [&](size_t k) {
      return answers[i + k] && answers[i + k]->status == 200;
    };
    if (!have_members && ok(0))
      have_members = read_members(answers[i]->body, snap);
    if (!have_shards && ok(1))
      have_shards = read_shards(answers[i + 1]->body, snap);
    if (!snap.singleton_host && ok(2))
      read_singletons(answers[i + 2]->body, "scheduler", snap);
    if (!snap.lease_holder && ok(3))
      read_leases(answers[i + 3]->body, "scheduler", snap);
  }
  return snap;
}

} // namespace troupe::demo
