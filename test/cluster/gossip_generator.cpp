#include "gossip_generator.hpp"

#include <algorithm>
#include <string>

#include "troupe/cluster/membership_state.hpp"

using namespace troupe::cluster;

namespace membership_test {

namespace {

constexpr std::string_view hosts = "abcdef";

} // namespace

gossip_history::gossip_history(uint64_t seed)
  : rng_(seed), now_(std::chrono::hours{1000}) {
  // The first node joins itself.
  unique_address first{"a", 2552, next_uid_++};
  replica r{first, gossip{{member::joining(first, {"x"})}}};
  stamp(r);
  replicas_.push_back(std::move(r));
}

size_t gossip_history::random_index(size_t n) {
  return static_cast<size_t>(rng_() % n);
}

void gossip_history::run(int steps) {
  for (int i = 0; i < steps; ++i)
    step();
}

void gossip_history::step() {
  now_ += std::chrono::milliseconds{1 + random_index(2000)};
  switch (random_index(10)) {
    case 0:
      join();
      break;
    case 1:
    case 2:
      leader_step();
      break;
    case 3:
    case 4:
      forced_move();
      break;
    case 5:
      observe();
      break;
    default:
      exchange();
  }
  pool_.push_back(replicas_[random_index(replicas_.size())].state);
}

const gossip& gossip_history::pick() {
  return pool_[random_index(pool_.size())];
}

gossip_history::replica* gossip_history::random_acting_replica() {
  // Only a node that is still a member of its own view acts.
  auto& r = replicas_[random_index(replicas_.size())];
  return r.state.has_member(r.self) ? &r : nullptr;
}

void gossip_history::stamp(replica& r) {
  r.state.increment(r.self);
  r.state.only_seen(r.self);
}

void gossip_history::join() {
  auto via = random_acting_replica();
  if (via == nullptr || via->state.members().size() >= hosts.size())
    return;
  // A host not in use in the view of the node joined through; a restarted
  // host gets a new uid, so removed incarnations stay removed.
  std::string host;
  do {
    host = std::string(1, hosts[random_index(hosts.size())]);
  } while (
    std::any_of(via->state.members().begin(), via->state.members().end(),
                [&](const member& m) { return m.address.host == host; }));
  unique_address fresh{host, 2552, next_uid_++};
  std::vector<std::string> roles;
  if (random_index(2) == 0)
    roles.push_back(random_index(2) == 0 ? "x" : "y");
  via->state.add(member::joining(fresh, roles));
  stamp(*via);
  replica joined{fresh, via->state};
  joined.state.seen(fresh);
  replicas_.push_back(std::move(joined));
}

void gossip_history::leader_step() {
  auto r = random_acting_replica();
  if (r == nullptr)
    return;
  membership_state state{r->state, r->self};
  leader_actions_settings settings;
  settings.prune_gossip_tombstones_after = std::chrono::seconds{30};
  auto result = random_index(2) == 0
                  ? move_joining_to_weakly_up(state, {}, settings)
                  : leader_actions(state, {}, now_, settings);
  if (result.verdict == leader_actions_verdict::changed) {
    r->state = std::move(result.next);
    stamp(*r);
  }
}

void gossip_history::forced_move() {
  // What another node could do concurrently: leave, down, a leader's move
  // without convergence, or a removal.
  auto r = random_acting_replica();
  if (r == nullptr)
    return;
  const auto& members = r->state.members();
  static constexpr member_status targets[]
    = {member_status::up, member_status::leaving, member_status::exiting,
       member_status::down, member_status::removed};
  auto to = targets[random_index(std::size(targets))];
  if (to == member_status::removed) {
    // Removes a random down or exiting member other than self.
    std::vector<unique_address> removable;
    for (const auto& x : members)
      if ((x.status == member_status::down
           || x.status == member_status::exiting)
          && x.address != r->self)
        removable.push_back(x.address);
    if (removable.empty())
      return;
    r->state.remove(removable[random_index(removable.size())], now_);
    stamp(*r);
    return;
  }
  const auto& m = members[random_index(members.size())];
  if (to == member_status::down) {
    r->state.mark_as_down(m.address);
  } else {
    int32_t up_number = 1;
    for (const auto& x : members)
      if (x.up_number != member::no_up_number)
        up_number = std::max(up_number, x.up_number + 1);
    auto moved
      = to == member_status::up ? m.with_up(up_number) : m.with_status(to);
    if (!moved || *moved == m)
      return;
    std::vector<member> changed{*moved};
    r->state.update(changed);
  }
  stamp(*r);
}

void gossip_history::observe() {
  auto r = random_acting_replica();
  if (r == nullptr || r->state.members().size() < 2)
    return;
  const auto& members = r->state.members();
  auto subject = members[random_index(members.size())].address;
  if (subject == r->self)
    return;
  auto before = r->state.reachability();
  switch (random_index(5)) {
    case 0:
      r->state.reachability().terminated(r->self, subject);
      break;
    case 1:
    case 2:
      r->state.reachability().reachable(r->self, subject);
      break;
    default:
      r->state.reachability().unreachable(r->self, subject);
  }
  if (r->state.reachability() != before)
    stamp(*r);
}

void gossip_history::exchange() {
  auto& to = replicas_[random_index(replicas_.size())];
  const auto& from = replicas_[random_index(replicas_.size())];
  // Akka ignores a gossip that does not contain the receiver; a removed
  // node has shut down.
  if (&to == &from || !from.state.has_member(to.self)
      || !to.state.has_member(to.self))
    return;
  const auto& remote = from.state;
  switch (compare(remote.version(), to.state.version())) {
    case clock_order::same:
      to.state.merge_seen(remote);
      break;
    case clock_order::before:
      break;
    case clock_order::after:
      to.state = remote;
      break;
    case clock_order::concurrent:
      to.state = merge(remote, to.state);
      break;
  }
  to.state.seen(to.self);
}

} // namespace membership_test
