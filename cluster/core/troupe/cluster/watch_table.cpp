#include "troupe/cluster/watch_table.hpp"

#include <algorithm>

#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

watch_table::watch_table(unique_address self, runtime::timespan flush_timeout)
  : self_(std::move(self)), flush_timeout_(flush_timeout) {}

// -- watcher end --------------------------------------------------------------

watch_effects watch_table::watch(watcher_id watcher, const remote_ref& ref) {
  TROUPE_ASSERT(ref.node.uid != 0);
  watch_effects out;
  if (auto i = removed_.find(ref.node); i != removed_.end()) {
    out.emplace_back(notify_watcher{
      watcher, remote_down{ref, i->second, "the node was removed earlier"}});
    return out;
  }
  auto& set = watchers_[ref];
  bool first = set.empty();
  if (!set.insert(watcher).second)
    return out;
  watched_[watcher].insert(ref);
  if (first)
    out.emplace_back(send_watch{ref});
  return out;
}

bool watch_table::drop_watch(watcher_id watcher, const remote_ref& ref) {
  auto w = watched_.find(watcher);
  if (w != watched_.end()) {
    w->second.erase(ref);
    if (w->second.empty())
      watched_.erase(w);
  }
  auto i = watchers_.find(ref);
  if (i == watchers_.end() || i->second.erase(watcher) == 0)
    return false;
  if (!i->second.empty())
    return false;
  forget_unwatched(ref);
  return true;
}

void watch_table::forget_unwatched(const remote_ref& ref) {
  watchers_.erase(ref);
  pending_.erase(ref);
  // fired_seq_ stays: it filters the second copy of a down already fired.
}

watch_effects watch_table::unwatch(watcher_id watcher, const remote_ref& ref) {
  watch_effects out;
  if (drop_watch(watcher, ref))
    out.emplace_back(send_unwatch{ref});
  return out;
}

watch_effects watch_table::watcher_stopped(watcher_id watcher) {
  watch_effects out;
  auto w = watched_.find(watcher);
  if (w == watched_.end())
    return out;
  auto refs = w->second; // drop_watch edits the set
  for (auto& ref : refs)
    if (drop_watch(watcher, ref))
      out.emplace_back(send_unwatch{ref});
  return out;
}

void watch_table::fire(const remote_ref& ref, down_cause cause,
                       std::string_view reason, watch_effects& out) {
  auto i = watchers_.find(ref);
  if (i == watchers_.end())
    return;
  for (auto watcher : i->second) {
    out.emplace_back(
      notify_watcher{watcher, remote_down{ref, cause, std::string{reason}}});
    auto w = watched_.find(watcher);
    if (w != watched_.end()) {
      w->second.erase(ref);
      if (w->second.empty())
        watched_.erase(w);
    }
  }
  forget_unwatched(ref);
}

watch_effects watch_table::down_received(const unique_address& from, lane lane,
                                         std::string_view name,
                                         down_cause cause, uint64_t seq,
                                         std::string_view reason,
                                         runtime::timestamp now) {
  watch_effects out;
  remote_ref ref{from, std::string{name}};
  if (auto f = fired_seq_.find(ref); f != fired_seq_.end()) {
    if (seq == f->second) {
      // The second copy of a down already fired: both copies are in.
      fired_seq_.erase(f);
      return out;
    }
    if (seq < f->second)
      return out; // a copy of an older down: stale
  }
  if (auto p = pending_.find(ref);
      p != pending_.end() && p->second.seq == seq) {
    // The ordinary copy of a down whose control copy came first.
    auto pending = std::move(p->second);
    fire(ref, pending.cause, pending.reason, out);
    return out;
  }
  if (watchers_.find(ref) == watchers_.end())
    return out;
  bool only_copy = from == self_;
  if (only_copy || lane == lane::ordinary) {
    fire(ref, cause, reason, out);
    if (!only_copy)
      fired_seq_[ref] = seq; // the control copy is still to come
    return out;
  }
  // The control copy came first: wait (bounded) for the ordinary one, so
  // the watcher sees the stopped actor's last messages before the down.
  auto deadline = now + flush_timeout_;
  pending_[ref] = pending_down{seq, cause, std::string{reason}, deadline};
  out.emplace_back(start_flush_timer{deadline});
  return out;
}

watch_effects watch_table::flush_timer_fired(runtime::timestamp now) {
  watch_effects out;
  std::vector<std::pair<remote_ref, pending_down>> due;
  for (auto& [ref, p] : pending_)
    if (p.deadline <= now)
      due.emplace_back(ref, p);
  for (auto& [ref, p] : due) {
    fire(ref, p.cause, p.reason, out);
    fired_seq_[ref] = p.seq; // the ordinary copy may still come
  }
  return out;
}

// -- peers --------------------------------------------------------------------

void watch_table::peer_down(const unique_address& peer) {
  if (removed_.find(peer) == removed_.end())
    disconnected_.insert(peer);
}

watch_effects watch_table::peer_up(const unique_address& peer) {
  watch_effects out;
  if (disconnected_.erase(peer) == 0)
    return out;
  // Watch requests (or the downs answering them) may have been lost with
  // the connection: ask again; the peer's side is idempotent.
  for (auto i = watchers_.lower_bound(remote_ref{peer, {}});
       i != watchers_.end() && i->first.node == peer; ++i)
    out.emplace_back(send_watch{i->first});
  return out;
}

watch_effects watch_table::node_removed(const unique_address& node,
                                        down_cause cause,
                                        std::string_view reason) {
  watch_effects out;
  if (node.uid == 0 || !removed_.emplace(node, cause).second)
    return out;
  disconnected_.erase(node);
  std::vector<remote_ref> refs;
  for (auto i = watchers_.lower_bound(remote_ref{node, {}});
       i != watchers_.end() && i->first.node == node; ++i)
    refs.push_back(i->first);
  for (auto& ref : refs)
    fire(ref, cause, reason, out);
  std::erase_if(fired_seq_,
                [&](const auto& kv) { return kv.first.node == node; });
  for (auto i = watching_.begin(); i != watching_.end();) {
    i->second.erase(node);
    i = i->second.empty() ? watching_.erase(i) : std::next(i);
  }
  return out;
}

// -- watched end --------------------------------------------------------------

watch_effects watch_table::watch_received(const unique_address& from,
                                          std::string_view name,
                                          bool published) {
  watch_effects out;
  if (removed_.find(from) != removed_.end())
    return out;
  if (!published) {
    std::string reason = "nothing is published under \"";
    reason += name;
    reason += "\"";
    out.emplace_back(send_down{from, std::string{name},
                               down_cause::not_published, ++next_seq_,
                               std::move(reason)});
    return out;
  }
  auto i = watching_.find(name);
  if (i == watching_.end())
    i = watching_.emplace(std::string{name}, std::set<unique_address>{}).first;
  i->second.insert(from);
  return out;
}

void watch_table::unwatch_received(const unique_address& from,
                                   std::string_view name) {
  auto i = watching_.find(name);
  if (i == watching_.end())
    return;
  i->second.erase(from);
  if (i->second.empty())
    watching_.erase(i);
}

watch_effects watch_table::published_gone(std::string_view name,
                                          down_cause cause,
                                          std::string_view reason) {
  watch_effects out;
  auto i = watching_.find(name);
  if (i == watching_.end())
    return out;
  auto seq = ++next_seq_;
  for (auto& node : i->second)
    out.emplace_back(
      send_down{node, std::string{name}, cause, seq, std::string{reason}});
  watching_.erase(i);
  return out;
}

// -- queries ------------------------------------------------------------------

std::vector<remote_ref> watch_table::watched_by(watcher_id watcher) const {
  auto i = watched_.find(watcher);
  if (i == watched_.end())
    return {};
  return {i->second.begin(), i->second.end()};
}

std::vector<watcher_id> watch_table::watchers_of(const remote_ref& ref) const {
  auto i = watchers_.find(ref);
  if (i == watchers_.end())
    return {};
  return {i->second.begin(), i->second.end()};
}

std::vector<unique_address>
watch_table::nodes_watching(std::string_view name) const {
  auto i = watching_.find(name);
  if (i == watching_.end())
    return {};
  return {i->second.begin(), i->second.end()};
}

size_t watch_table::size() const noexcept {
  size_t n = 0;
  for (auto& [ref, set] : watchers_)
    n += set.size();
  return n;
}

bool watch_table::is_removed(const unique_address& node) const {
  return removed_.find(node) != removed_.end();
}

} // namespace troupe::cluster
