#include "troupe/sharding/coordinator_engine.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "troupe/cluster/role_filter.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::sharding {

using cluster::member;
using cluster::member_status;

const char* to_string(coordinator_phase x) noexcept {
  switch (x) {
    case coordinator_phase::recovering:
      return "recovering";
    case coordinator_phase::active:
      return "active";
  }
  return "unknown";
}

namespace {

std::string list(const std::set<unique_address>& xs) {
  std::string out;
  for (auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += to_string(x);
  }
  return out;
}

} // namespace

coordinator_engine::coordinator_engine(
  unique_address self, sharding_settings settings,
  std::shared_ptr<const allocation_strategy> strategy,
  std::function<bool()> lease_alive, coordinator_bug bug)
  : self_(std::move(self)), settings_(std::move(settings)),
    strategy_(std::move(strategy)), lease_alive_(std::move(lease_alive)),
    bug_(bug) {
  assert(strategy_ != nullptr);
}

// -- inputs -------------------------------------------------------------------

coordinator_effects
coordinator_engine::start(const cluster::membership_state& state, timestamp now,
                          const std::vector<recent_removal>& removals) {
  coordinator_effects out;
  if (started_)
    return on_membership(state, now);
  started_ = true;
  rebalance_at_ = now + settings_.rebalance_interval;
  // Members removed before this coordinator existed: their shards are
  // unknown here, so nothing is allocated until their margin has passed.
  if (bug_ != coordinator_bug::no_removal_margin)
    for (auto& r : removals) {
      auto until = r.removed_at + settings_.down_removal_margin;
      if (until <= now || state.latest_gossip().has_member(r.node))
        continue;
      removed_[r.node] = removed_member{until};
      awaiting_.insert(r.node);
      log(out, log_level::info,
          fmt::format("{} was removed {} ago: allocating nothing until the "
                      "down removal margin of {} has passed since",
                      to_string(r.node),
                      runtime::render_duration(
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                          now - r.removed_at)),
                      runtime::render_duration(settings_.down_removal_margin)));
    }
  update_view(state, now, out);
  if (bug_ == coordinator_bug::skip_recovery)
    awaiting_.clear();
  log(out, log_level::info,
      fmt::format("coordinator started on {}: waiting for the regions of {} "
                  "member(s) to report before allocating",
                  to_string(self_), awaiting_.size()));
  maybe_finish_recovery(now, out);
  return out;
}

coordinator_effects
coordinator_engine::on_membership(const cluster::membership_state& state,
                                  timestamp now) {
  coordinator_effects out;
  if (!started_)
    return start(state, now);
  update_view(state, now, out);
  maybe_finish_recovery(now, out);
  if (phase_ == coordinator_phase::active)
    answer_waiting(now, out);
  return out;
}

coordinator_effects
coordinator_engine::on_message(const unique_address& from,
                               const to_coordinator& message, timestamp now) {
  coordinator_effects out;
  std::visit(
    [&](const auto& m) {
      using T = std::decay_t<decltype(m)>;
      if constexpr (std::is_same_v<T, register_region>) {
        on_register(from, m, now, out);
      } else if constexpr (std::is_same_v<T, get_shard_home>) {
        on_get_home(from, m.shard, now, out);
      } else if constexpr (std::is_same_v<T, shard_started>) {
        // The home was recorded at allocation; nothing to do (Akka keeps
        // it for remember-entities only).
        if (home(m.shard) != from)
          ++counters_.ignored_messages;
      } else if constexpr (std::is_same_v<T, begin_hand_off_ack>) {
        on_ack(from, m.shard, now, out);
      } else if constexpr (std::is_same_v<T, shard_stopped>) {
        on_stopped(from, m.shard, now, out);
      } else if constexpr (std::is_same_v<T, graceful_shutdown_request>) {
        on_shutdown_request(from, now, out);
      }
    },
    message);
  return out;
}

coordinator_effects
coordinator_engine::on_region_terminated(const unique_address& region,
                                         region_gone why, timestamp now) {
  coordinator_effects out;
  watched_.erase(region);
  auto i = regions_.find(region);
  if (why == region_gone::not_published) {
    // No region there when the watch arrived. A region that registered
    // since then reported the truth itself (a region never restarts on
    // the same node incarnation), so this only settles recovery.
    if (i == regions_.end())
      resolve_report(region, now, out);
    maybe_finish_recovery(now, out);
    return out;
  }
  if (i != regions_.end())
    region_gone_now(region, "its region stopped", now, out);
  else
    resolve_report(region, now, out);
  maybe_finish_recovery(now, out);
  if (phase_ == coordinator_phase::active)
    answer_waiting(now, out);
  return out;
}

coordinator_effects coordinator_engine::tick(timestamp now) {
  coordinator_effects out;
  // Removal margins that ended.
  for (auto i = removed_.begin(); i != removed_.end();) {
    if (i->second.effective_at > now) {
      ++i;
      continue;
    }
    auto node = i->first;
    i = removed_.erase(i);
    if (regions_.count(node) > 0)
      region_gone_now(node,
                      "its member was removed and the down removal margin "
                      "has passed",
                      now, out);
    else
      resolve_report(node, now, out);
  }
  // Recovery: ask again.
  if (phase_ == coordinator_phase::recovering && hello_at_
      && *hello_at_ <= now) {
    for (auto& node : awaiting_)
      if (removed_.count(node) == 0)
        out.send.push_back({node, coordinator_hello{}});
    hello_at_ = now + settings_.retry_interval;
  }
  maybe_finish_recovery(now, out);
  // Rebalances that took too long.
  for (auto i = rebalances_.begin(); i != rebalances_.end();) {
    if (i->second.deadline > now) {
      ++i;
      continue;
    }
    ++counters_.rebalances_timed_out;
    if (i->second.hand_off_sent)
      stopping_.insert(i->first);
    log(out, log_level::warning,
        fmt::format("rebalance of shard {} from {} timed out after {} ({}); "
                    "the shard stays there, a late shard_stopped from it "
                    "still moves it",
                    i->first, to_string(i->second.owner),
                    runtime::render_duration(settings_.hand_off_timeout),
                    i->second.hand_off_sent
                      ? std::string{"no shard_stopped"}
                      : "no begin_hand_off_ack from "
                          + list(i->second.awaiting_ack)));
    i = rebalances_.erase(i);
  }
  if (phase_ == coordinator_phase::active) {
    if (rebalance_at_ && *rebalance_at_ <= now) {
      rebalance_at_ = now + settings_.rebalance_interval;
      rebalance_round(now, out);
    }
    hand_off_shutting_down(now, out);
    if (retry_at_ && *retry_at_ <= now) {
      retry_at_.reset();
      answer_waiting(now, out);
    }
  }
  if (!waiting_.empty() && !retry_at_)
    retry_at_ = now + settings_.retry_interval;
  return out;
}

std::optional<timestamp> coordinator_engine::next_tick() const {
  std::optional<timestamp> t;
  auto earlier = [&](timestamp x) {
    if (!t || x < *t)
      t = x;
  };
  for (auto& [node, r] : removed_)
    earlier(r.effective_at);
  if (phase_ == coordinator_phase::recovering && hello_at_)
    earlier(*hello_at_);
  for (auto& [shard, r] : rebalances_)
    earlier(r.deadline);
  if (phase_ == coordinator_phase::active && rebalance_at_)
    earlier(*rebalance_at_);
  // Requests that wait for the lease or for a region are retried at the
  // retry interval (the lease comes back without an input).
  if (phase_ == coordinator_phase::active && !waiting_.empty() && retry_at_)
    earlier(*retry_at_);
  return t;
}

// -- queries ------------------------------------------------------------------

std::map<unique_address, std::vector<shard_id>>
coordinator_engine::shard_map() const {
  std::map<unique_address, std::vector<shard_id>> out;
  for (auto& [node, r] : regions_)
    if (!r.proxy)
      out.emplace(node, r.shards);
  return out;
}

std::optional<unique_address>
coordinator_engine::home(const shard_id& shard) const {
  if (auto i = homes_.find(shard); i != homes_.end())
    return i->second;
  return std::nullopt;
}

std::set<shard_id> coordinator_engine::rebalancing() const {
  std::set<shard_id> out;
  for (auto& [shard, r] : rebalances_)
    out.insert(shard);
  return out;
}

std::set<unique_address> coordinator_engine::awaiting_reports() const {
  return awaiting_;
}

// -- the view -----------------------------------------------------------------

bool coordinator_engine::is_candidate(const member& m) const {
  return cluster::in_role(m, settings_.role);
}

void coordinator_engine::update_view(const cluster::membership_state& state,
                                     timestamp now, coordinator_effects& out) {
  auto& g = state.latest_gossip();
  std::map<unique_address, member> next;
  std::set<unique_address> unreachable;
  for (auto& m : g.members()) {
    if (!is_candidate(m))
      continue;
    next.emplace(m.address, m);
    if (!g.reachability().is_reachable(m.address))
      unreachable.insert(m.address);
  }
  // Members that left the view: removed.
  for (auto& [node, m] : members_) {
    if (next.count(node) > 0)
      continue;
    bool graceful
      = m.status == member_status::exiting && unreachable_.count(node) == 0;
    if (graceful || bug_ == coordinator_bug::no_removal_margin) {
      if (regions_.count(node) > 0)
        region_gone_now(node, "its member was removed after leaving", now, out);
      else
        resolve_report(node, now, out);
    } else {
      // A member that left while unreachable may still be handing off in
      // its own view: its region stops its shards locally only after
      // hand_off_timeout without progress (region_engine.hpp), then within
      // entity_stop_timeout.
      auto wait = settings_.down_removal_margin;
      if (m.status == member_status::leaving
          || m.status == member_status::exiting)
        wait = std::max(wait, settings_.hand_off_timeout
                                + settings_.entity_stop_timeout);
      removed_[node] = removed_member{now + wait};
      if (regions_.count(node) > 0 || awaiting_.count(node) > 0)
        log(
          out, log_level::info,
          fmt::format("{} was removed from status {}{}: its shards stay "
                      "there for the down removal margin of {}",
                      to_string(node), cluster::to_string(m.status),
                      unreachable_.count(node) > 0 ? " (unreachable)" : "",
                      runtime::render_duration(settings_.down_removal_margin)));
    }
  }
  // A removed member's region routes nothing any more: it counts as having
  // acked every begin_hand_off (scenario H5).
  std::vector<shard_id> progressed;
  for (auto& [shard, r] : rebalances_)
    for (auto& [node, m] : members_)
      if (next.count(node) == 0 && r.awaiting_ack.erase(node) > 0)
        progressed.push_back(shard);
  for (auto& shard : progressed)
    continue_rebalance(shard, out);
  // New members: in recovery, their regions must report.
  for (auto& [node, m] : next)
    if (members_.count(node) == 0 && phase_ == coordinator_phase::recovering
        && regions_.count(node) == 0 && removed_.count(node) == 0)
      expect_report(node, now, out);
  members_ = std::move(next);
  unreachable_ = std::move(unreachable);
}

void coordinator_engine::expect_report(const unique_address& node,
                                       timestamp now,
                                       coordinator_effects& out) {
  if (!awaiting_.insert(node).second)
    return;
  if (watched_.insert(node).second)
    out.watch.push_back(node);
  out.send.push_back({node, coordinator_hello{}});
  if (!hello_at_)
    hello_at_ = now + settings_.retry_interval;
}

void coordinator_engine::resolve_report(const unique_address& node, timestamp,
                                        coordinator_effects&) {
  awaiting_.erase(node);
}

void coordinator_engine::maybe_finish_recovery(timestamp now,
                                               coordinator_effects& out) {
  if (phase_ != coordinator_phase::recovering || !started_)
    return;
  // A member removed within its margin is still awaited: it may host
  // shards until the margin has passed.
  if (!awaiting_.empty())
    return;
  phase_ = coordinator_phase::active;
  hello_at_.reset();
  log(out, log_level::info,
      fmt::format("coordinator active: {} region(s), {} shard(s) with a home",
                  std::count_if(regions_.begin(), regions_.end(),
                                [](auto& x) { return !x.second.proxy; }),
                  homes_.size()));
  answer_waiting(now, out);
}

// -- regions ------------------------------------------------------------------

bool coordinator_engine::allocatable(const unique_address& node) const {
  auto r = regions_.find(node);
  if (r == regions_.end() || r->second.proxy || r->second.shutting_down)
    return false;
  auto m = members_.find(node);
  return m != members_.end() && m->second.status == member_status::up
         && unreachable_.count(node) == 0 && removed_.count(node) == 0;
}

std::vector<region_allocation>
coordinator_engine::allocations(bool only_allocatable) const {
  std::vector<region_allocation> out;
  for (auto& [node, r] : regions_) {
    if (r.proxy || (only_allocatable && !allocatable(node)))
      continue;
    auto m = members_.find(node);
    if (m == members_.end())
      continue;
    out.push_back(region_allocation{m->second, r.shards});
  }
  return out;
}

void coordinator_engine::on_register(const unique_address& from,
                                     const register_region& m, timestamp now,
                                     coordinator_effects& out) {
  if (m.number_of_shards != settings_.number_of_shards) {
    ++counters_.refused_registrations;
    auto reason = fmt::format(
      "sharding.number_of_shards differs: the region on {} has {}, the "
      "coordinator on {} has {}; every node must use the same value",
      to_string(from), m.number_of_shards, to_string(self_),
      settings_.number_of_shards);
    log(out, log_level::error, "registration refused: " + reason);
    out.send.push_back({from, register_ack{false, reason}});
    resolve_report(from, now, out);
    maybe_finish_recovery(now, out);
    return;
  }
  if (removed_.count(from) > 0 || (members_.count(from) == 0 && !m.proxy)) {
    // A region on a member this view does not have (removed, or not yet
    // seen): it is asked again once its member is in the view.
    ++counters_.ignored_messages;
    log(out, log_level::debug,
        fmt::format("registration of {} ignored: not a member in this view",
                    to_string(from)));
    return;
  }
  auto [i, added] = regions_.emplace(from, region_info{});
  auto& region = i->second;
  region.proxy = m.proxy;
  if (watched_.insert(from).second)
    out.watch.push_back(from);
  for (auto& shard : m.shards) {
    auto h = homes_.find(shard);
    if (h == homes_.end()) {
      assign(shard, from);
    } else if (h->second != from) {
      ++counters_.conflicts;
      log(out, log_level::error,
          fmt::format("the region on {} reports shard {}, whose home is {}: "
                      "two homes; asking {} to hand it off",
                      to_string(from), shard, to_string(h->second),
                      to_string(from)));
      out.send.push_back({from, hand_off{shard}});
    }
  }
  if (added)
    log(out, log_level::info,
        fmt::format("{} registered on {} with {} shard(s)",
                    m.proxy ? "proxy" : "region", to_string(from),
                    m.shards.size()));
  out.send.push_back({from, register_ack{true, {}}});
  if (region.shutting_down)
    out.send.push_back({from, graceful_shutdown_ack{}});
  resolve_report(from, now, out);
  maybe_finish_recovery(now, out);
  if (phase_ == coordinator_phase::active)
    answer_waiting(now, out);
}

void coordinator_engine::on_get_home(const unique_address& from,
                                     const shard_id& shard, timestamp now,
                                     coordinator_effects& out) {
  if (regions_.count(from) == 0) {
    // Akka answers only registered regions; the region registers first.
    ++counters_.ignored_messages;
    return;
  }
  if (phase_ == coordinator_phase::active && rebalances_.count(shard) == 0) {
    auto h = homes_.find(shard);
    if (h != homes_.end()) {
      bool owner_stopping = h->second == from && stopping_.count(shard) > 0;
      if (removed_.count(h->second) == 0 && !owner_stopping) {
        out.send.push_back({from, shard_home{shard, h->second}});
        return;
      }
      // The owner asks for a shard it was told to hand off: it is still
      // stopping it (its shard_stopped comes), or the hand_off never
      // reached it (it buffers since begin_hand_off and would wait for ever
      // while this request waits for its shard_stopped). hand_off again:
      // idempotent at the region, which answers shard_stopped once the
      // entities are gone (found by the simulator, lease seed 188).
      if (owner_stopping)
        out.send.push_back({from, hand_off{shard}});
    } else if (try_allocate(shard, from, now, out)) {
      return;
    }
  }
  waiting_[shard].insert(from);
  if (!retry_at_)
    retry_at_ = now + settings_.retry_interval;
}

void coordinator_engine::on_ack(const unique_address& from,
                                const shard_id& shard, timestamp,
                                coordinator_effects& out) {
  auto i = rebalances_.find(shard);
  if (i == rebalances_.end() || i->second.awaiting_ack.erase(from) == 0) {
    ++counters_.ignored_messages;
    return;
  }
  continue_rebalance(shard, out);
}

void coordinator_engine::on_stopped(const unique_address& from,
                                    const shard_id& shard, timestamp now,
                                    coordinator_effects& out) {
  auto h = homes_.find(shard);
  bool from_owner = h != homes_.end() && h->second == from;
  if (!from_owner
      && !(bug_ == coordinator_bug::trust_any_shard_stopped
           && h != homes_.end())) {
    // Scenario H1 (a): a shard_stopped from a region that is not the
    // shard's home (a backup answer, a late copy) must not deallocate it.
    ++counters_.ignored_messages;
    log(out, log_level::debug,
        fmt::format("shard_stopped for {} from {} ignored: its home is {}",
                    shard, to_string(from),
                    h == homes_.end() ? std::string{"none"}
                                      : to_string(h->second)));
    return;
  }
  bool was_rebalancing = rebalances_.erase(shard) > 0;
  if (was_rebalancing)
    ++counters_.rebalances_done;
  log(out, log_level::debug,
      fmt::format("shard {} stopped on {}{}", shard, to_string(from),
                  was_rebalancing ? " (rebalance done)" : ""));
  deallocate(shard);
  // Allocate again at once (scenario H8: the moved shards do not wait for
  // traffic), unless nobody may take it now.
  if (phase_ == coordinator_phase::active)
    try_allocate(shard, from, now, out);
}

void coordinator_engine::on_shutdown_request(const unique_address& from,
                                             timestamp now,
                                             coordinator_effects& out) {
  auto i = regions_.find(from);
  if (i == regions_.end()) {
    ++counters_.ignored_messages;
    return;
  }
  if (!i->second.shutting_down)
    log(out, log_level::info,
        fmt::format("the region on {} shuts down: handing off its {} "
                    "shard(s)",
                    to_string(from), i->second.shards.size()));
  i->second.shutting_down = true;
  out.send.push_back({from, graceful_shutdown_ack{}});
  if (phase_ == coordinator_phase::active)
    hand_off_shutting_down(now, out);
}

void coordinator_engine::region_gone_now(const unique_address& node,
                                         const std::string& why, timestamp now,
                                         coordinator_effects& out) {
  auto i = regions_.find(node);
  if (i != regions_.end()) {
    if (!i->second.proxy && i->second.shards.empty())
      log(out, log_level::info,
          fmt::format("the region on {} is gone ({}); it hosted no shards",
                      to_string(node), why));
    else if (!i->second.proxy)
      log(out, log_level::info,
          fmt::format("the region on {} is gone ({}): its {} shard(s) lose "
                      "their home",
                      to_string(node), why, i->second.shards.size()));
    auto shards = i->second.shards;
    for (auto& shard : shards) {
      if (rebalances_.erase(shard) > 0)
        ++counters_.rebalances_done;
      deallocate(shard);
    }
    regions_.erase(node);
  }
  watched_.erase(node);
  resolve_report(node, now, out);
  // Scenario H5: a region that is gone counts as having acked.
  std::vector<shard_id> progressed;
  for (auto& [shard, r] : rebalances_)
    if (r.awaiting_ack.erase(node) > 0)
      progressed.push_back(shard);
  for (auto& shard : progressed)
    continue_rebalance(shard, out);
  // Its shards are allocated again when asked, or at once for the ones
  // regions wait for.
  if (phase_ == coordinator_phase::active)
    answer_waiting(now, out);
}

// -- allocation ---------------------------------------------------------------

bool coordinator_engine::lease_ok() {
  if (!lease_alive_ || lease_alive_()
      || bug_ == coordinator_bug::ignore_lease) {
    lease_refusal_logged_ = false;
    return true;
  }
  ++counters_.lease_refusals;
  return false;
}

void coordinator_engine::assign(const shard_id& shard,
                                const unique_address& region) {
  homes_[shard] = region;
  regions_[region].shards.push_back(shard);
}

void coordinator_engine::deallocate(const shard_id& shard) {
  stopping_.erase(shard);
  auto h = homes_.find(shard);
  if (h == homes_.end())
    return;
  if (auto r = regions_.find(h->second); r != regions_.end()) {
    auto& xs = r->second.shards;
    xs.erase(std::remove(xs.begin(), xs.end(), shard), xs.end());
  }
  homes_.erase(h);
}

bool coordinator_engine::try_allocate(const shard_id& shard,
                                      const unique_address& requester,
                                      timestamp, coordinator_effects& out) {
  if (!lease_ok()) {
    if (!lease_refusal_logged_) {
      lease_refusal_logged_ = true;
      log(out, log_level::warning,
          fmt::format("not allocating shard {}: the coordinator lease is not "
                      "held (allocations wait until it is)",
                      shard));
    }
    return false;
  }
  auto candidates = allocations(true);
  if (candidates.empty())
    return false;
  auto chosen = strategy_->allocate(shard, requester, candidates);
  if (!chosen || !allocatable(*chosen)) {
    if (chosen)
      log(out, log_level::error,
          fmt::format("the allocation strategy chose {} for shard {}, which "
                      "may not take shards; asking again later",
                      to_string(*chosen), shard));
    return false;
  }
  ++counters_.allocations;
  assign(shard, *chosen);
  out.send.push_back({*chosen, host_shard{shard}});
  if (requester != *chosen)
    out.send.push_back({requester, shard_home{shard, *chosen}});
  if (auto w = waiting_.find(shard); w != waiting_.end()) {
    for (auto& r : w->second)
      if (r != *chosen && r != requester)
        out.send.push_back({r, shard_home{shard, *chosen}});
    waiting_.erase(w);
  }
  return true;
}

void coordinator_engine::answer_waiting(timestamp now,
                                        coordinator_effects& out) {
  if (phase_ != coordinator_phase::active)
    return;
  std::vector<shard_id> shards;
  shards.reserve(waiting_.size());
  for (auto& [shard, requesters] : waiting_)
    shards.push_back(shard);
  for (auto& shard : shards) {
    auto i = waiting_.find(shard);
    if (i == waiting_.end())
      continue;
    auto& requesters = i->second;
    // Requesters that are gone need no answer.
    std::erase_if(requesters,
                  [this](auto& r) { return regions_.count(r) == 0; });
    if (requesters.empty()) {
      waiting_.erase(i);
      continue;
    }
    if (rebalances_.count(shard) > 0)
      continue;
    auto h = homes_.find(shard);
    if (h == homes_.end()) {
      // Answers every requester when it allocates.
      try_allocate(shard, *requesters.begin(), now, out);
      continue;
    }
    if (removed_.count(h->second) > 0)
      continue; // within the removal margin
    bool owner_waits = false;
    for (auto& r : requesters) {
      if (r == h->second && stopping_.count(shard) > 0) {
        owner_waits = true; // see stopping_
        continue;
      }
      out.send.push_back({r, shard_home{shard, h->second}});
    }
    if (owner_waits)
      requesters = {h->second};
    else
      waiting_.erase(i);
  }
}

// -- rebalance ----------------------------------------------------------------

void coordinator_engine::start_rebalance(const shard_id& shard, timestamp now,
                                         coordinator_effects& out) {
  auto h = homes_.find(shard);
  if (h == homes_.end() || rebalances_.count(shard) > 0)
    return;
  ++counters_.rebalances_started;
  rebalance_state r;
  r.owner = h->second;
  r.deadline = now + settings_.hand_off_timeout;
  // Every region and proxy forgets the home and buffers (Akka's
  // RebalanceWorker sends BeginHandOff to all regions); the ones that are
  // gone count as acked (H5).
  for (auto& [node, region] : regions_)
    if (removed_.count(node) == 0) {
      r.awaiting_ack.insert(node);
      out.send.push_back({node, begin_hand_off{shard}});
    }
  log(out, log_level::debug,
      fmt::format("rebalance of shard {} from {}: begin_hand_off to {} "
                  "region(s)",
                  shard, to_string(r.owner), r.awaiting_ack.size()));
  rebalances_.emplace(shard, std::move(r));
  continue_rebalance(shard, out);
}

void coordinator_engine::continue_rebalance(const shard_id& shard,
                                            coordinator_effects& out) {
  auto i = rebalances_.find(shard);
  if (i == rebalances_.end())
    return;
  auto& r = i->second;
  if (!r.awaiting_ack.empty() || r.hand_off_sent)
    return;
  r.hand_off_sent = true;
  if (regions_.count(r.owner) > 0 && removed_.count(r.owner) == 0)
    out.send.push_back({r.owner, hand_off{shard}});
}

void coordinator_engine::rebalance_round(timestamp now,
                                         coordinator_effects& out) {
  auto current = allocations(true);
  if (current.size() < 2)
    return;
  auto in_progress = rebalancing();
  auto shards = strategy_->rebalance(current, in_progress);
  if (shards.empty())
    return;
  if (!lease_ok()) {
    log(out, log_level::warning,
        "not rebalancing: the coordinator lease is not held");
    return;
  }
  // One INFO line per round (the per-shard lines are DEBUG): a user sees
  // why entities restart elsewhere.
  std::map<runtime::unique_address, size_t> from;
  for (auto& shard : shards)
    if (auto h = homes_.find(shard); h != homes_.end())
      ++from[h->second];
  std::string sources;
  for (auto& [node, n] : from)
    sources += fmt::format("{}{} from {}", sources.empty() ? "" : ", ", n,
                           to_string(node));
  log(out, log_level::info,
      fmt::format("rebalance: moving {} shard(s) ({}); their entities stop "
                  "there and start again where the shards are allocated",
                  shards.size(), sources));
  for (auto& shard : shards)
    start_rebalance(shard, now, out);
}

void coordinator_engine::hand_off_shutting_down(timestamp now,
                                                coordinator_effects& out) {
  std::vector<shard_id> todo;
  for (auto& [node, r] : regions_)
    if (r.shutting_down)
      for (auto& shard : r.shards)
        if (rebalances_.count(shard) == 0)
          todo.push_back(shard);
  if (todo.empty() || !lease_ok())
    return;
  for (auto& shard : todo)
    start_rebalance(shard, now, out);
}

void coordinator_engine::log(coordinator_effects& out, log_level level,
                             std::string text) const {
  out.log.push_back(log_line{level, std::move(text)});
}

} // namespace troupe::sharding
