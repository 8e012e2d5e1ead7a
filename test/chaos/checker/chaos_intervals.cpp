// Instances, their processes and the interval checks (chaos_intervals.hpp).

#include "chaos_intervals.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace troupe::chaos {

namespace {

using demo::verdict::counted;

bool is_interruption(nemesis_op op) noexcept {
  return op == nemesis_op::pause || op == nemesis_op::kill
         || op == nemesis_op::node_exit;
}

bool earlier(const nemesis_event* a, const nemesis_event* b) noexcept {
  return std::tie(a->mono_ns, a->line) < std::tie(b->mono_ns, b->line);
}

// The instances of one group in start order (ties by file and line).
std::map<std::string, std::vector<const instance*>>
grouped(const std::vector<instance>& xs) {
  std::map<std::string, std::vector<const instance*>> out;
  for (auto& x : xs)
    out[x.group].push_back(&x);
  for (auto& [group, v] : out)
    std::sort(v.begin(), v.end(), [](const instance* a, const instance* b) {
      return std::tie(a->started->mono_ns, a->file().name, a->started->line)
             < std::tie(b->started->mono_ns, b->file().name, b->started->line);
    });
  return out;
}

// `file line N: <event>`.
std::string located(const history_file& f, const node_event& e) {
  return fmt::format("{} line {}: {}", f.path(), e.line, describe(e));
}

std::string overlap_words(const interval_words& w, const std::string& group) {
  return fmt::format(fmt::runtime(w.overlap), group);
}

// The instance of another owner with the latest acting end so far: keeps
// the latest two ends of distinct owners, so one of them is never the
// asker's own.
class latest_two {
public:
  void add(const instance* x) {
    auto end = x->acting_end();
    if (best_ != nullptr && best_->owner == x->owner) {
      if (end > best_->acting_end())
        best_ = x;
    } else if (best_ == nullptr || end > best_->acting_end()) {
      second_ = best_;
      best_ = x;
    } else if (second_ == nullptr || end > second_->acting_end()) {
      second_ = x;
    }
  }

  const instance* other_than(const std::string& owner) const {
    return best_ != nullptr && best_->owner != owner ? best_ : second_;
  }

private:
  const instance* best_ = nullptr;
  const instance* second_ = nullptr;
};

// The instances one process started so far, found by what its stops and
// writes name (see collect_instances).
class instance_index {
public:
  instance_index(const process_record& p, run_instances& out)
    : process_(p), out_(out) {}

  void start(const node_event& e) {
    auto singleton = e.kind == node_event_kind::singleton_started;
    auto& xs = singleton ? out_.singletons : out_.entities;
    (singleton ? singletons_ : entities_)[key_of(e, singleton)] = xs.size();
    xs.push_back({&process_, singleton ? e.type : e.account,
                  fmt::format("{}/{}", e.address, e.incarnation), &e});
  }

  instance* owner_of(const node_event& e) {
    using kind = node_event_kind;
    if (e.kind == kind::ledger_write) {
      // It names no type: its token tells the instance.
      instance* found = nullptr;
      for (auto& [k, i] : singletons_) {
        auto& x = out_.singletons[i];
        if (k.second == e.incarnation && x.started->token == e.token
            && (found == nullptr || &x > found))
          found = &x;
      }
      return found;
    }
    auto singleton = e.kind == kind::singleton_stopped;
    auto& index = singleton ? singletons_ : entities_;
    auto i = index.find(key_of(e, singleton));
    if (i == index.end())
      return nullptr;
    return &(singleton ? out_.singletons : out_.entities)[i->second];
  }

private:
  using key = std::pair<std::string, uint64_t>;

  // (type, incarnation) for singleton events, (account, incarnation) for
  // entity events.
  static key key_of(const node_event& e, bool singleton) {
    return {singleton ? e.type : e.account, e.incarnation};
  }

  const process_record& process_;
  run_instances& out_;
  std::map<key, size_t> singletons_;
  std::map<key, size_t> entities_;
};

} // namespace

int64_t instance::acting_end() const noexcept {
  return writes.empty() ? started->mono_ns : writes.back()->mono_ns;
}

std::vector<process_record>
match_processes(const chaos_history& h, std::vector<std::string>& problems) {
  // (node, start) -> its first node_start; a later one is a problem.
  std::map<std::pair<std::string, uint64_t>, const nemesis_event*> starts;
  for (auto& e : h.nemesis) {
    if (e.op != nemesis_op::node_start)
      continue;
    auto [i, fresh] = starts.emplace(std::pair{e.node, e.start}, &e);
    if (!fresh)
      problems.push_back(fmt::format("{} line {}: node_start of {} start {} "
                                     "again (line {} had it)",
                                     file_names::nemesis, e.line,
                                     printable(e.node), e.start,
                                     i->second->line));
  }
  std::set<std::pair<std::string, uint64_t>> files;
  std::vector<process_record> out;
  for (auto& f : h.files) {
    files.emplace(f.node, f.start);
    process_record p{&f, nullptr, {}};
    if (auto i = starts.find({f.node, f.start}); i != starts.end())
      p.node_start = i->second;
    if (p.node_start == nullptr) {
      problems.push_back(fmt::format("{}: no node_start of {} start {} in {}",
                                     f.path(), printable(f.node), f.start,
                                     file_names::nemesis));
    } else {
      for (auto& e : h.nemesis)
        if (is_interruption(e.op) && e.node == f.node
            && e.pid == p.node_start->pid && !earlier(&e, p.node_start))
          p.interruptions.push_back(&e);
      std::sort(p.interruptions.begin(), p.interruptions.end(), earlier);
    }
    out.push_back(std::move(p));
  }
  for (auto& [key, e] : starts)
    if (!files.contains(key))
      problems.push_back(fmt::format(
        "{} line {}: node_start of {} start {}, but {}{}.{}.jsonl is missing",
        file_names::nemesis, e->line, printable(e->node), e->start,
        file_names::history_dir, printable(e->node), e->start));
  return out;
}

run_instances collect_instances(const std::vector<process_record>& processes) {
  run_instances out;
  using kind = node_event_kind;
  for (auto& p : processes) {
    instance_index index{p, out};
    for (auto& e : p.file->events) {
      if (e.kind == kind::singleton_started || e.kind == kind::entity_started) {
        index.start(e);
        continue;
      }
      auto is_stop
        = e.kind == kind::singleton_stopped || e.kind == kind::entity_stopped;
      auto is_write
        = e.kind == kind::ledger_write || e.kind == kind::deposit_write;
      if (!is_stop && !is_write)
        continue;
      auto* x = index.owner_of(e);
      if (is_stop && x != nullptr && x->stopped == nullptr)
        x->stopped = &e;
      if (is_write && (x == nullptr || x->stopped != nullptr))
        out.strays.push_back({&p, &e, x == nullptr ? nullptr : x->stopped});
      if (is_write && x != nullptr)
        x->writes.push_back(&e);
    }
  }
  return out;
}

std::vector<instance> by_shard(const std::vector<instance>& entities) {
  auto out = entities;
  for (auto& x : out) {
    x.group = fmt::format("shard {}", x.started->shard);
    x.owner = x.file().address;
  }
  return out;
}

lifetime_end uninterrupted_end(const instance& x) {
  lifetime_end out{end_of_run, "the end of the run", false};
  if (x.stopped != nullptr)
    out = {x.stopped->mono_ns,
           fmt::format("its {} (line {})", to_string(x.stopped->kind),
                       x.stopped->line),
           false};
  for (auto* e : x.process->interruptions)
    if (e->mono_ns >= x.started->mono_ns) {
      // A stop stamped at the same nanosecond came first.
      if (e->mono_ns < out.mono_ns)
        out = {e->mono_ns,
               fmt::format("a {} ({} line {})", to_string(e->op),
                           file_names::nemesis, e->line),
               true};
      break;
    }
  return out;
}

check_result check_acting(const std::vector<instance>& xs,
                          const interval_words& words) {
  check_builder c{words.check};
  auto groups = grouped(xs);
  for (auto& [group, sorted] : groups) {
    latest_two latest;
    for (auto* y : sorted) {
      auto start = y->started->mono_ns;
      auto* x = latest.other_than(y->owner);
      if (x != nullptr && x->acting_end() >= start) {
        // The earlier instance's first write at or after the later start;
        // none when the two started at the same nanosecond.
        auto w = std::find_if(x->writes.begin(), x->writes.end(),
                              [&](auto* e) { return e->mono_ns >= start; });
        auto& culprit = w == x->writes.end() ? *y : *x;
        auto& event = w == x->writes.end() ? *y->started : **w;
        c.fail(fmt::format("{}, stamped at or after {}: {}",
                           located(culprit.file(), event),
                           located(y->file(), *y->started),
                           overlap_words(words, group)),
               culprit.file().ref(event));
      }
      latest.add(y);
    }
  }
  auto summary = fmt::format(
    "{} over {}: no two acting intervals [started, last write] overlap",
    counted(xs.size(), words.one, words.many),
    counted(groups.size(), words.group_one, words.group_many));
  if (!c.ok())
    summary = counted(c.violations(), "overlap of acting intervals",
                      "overlaps of acting intervals");
  return std::move(c).finish(std::move(summary));
}

check_result check_lifetimes(const std::vector<instance>& xs,
                             const interval_words& words) {
  check_builder c{words.check};
  auto groups = grouped(xs);
  size_t interrupted = 0;
  for (auto& [group, sorted] : groups) {
    for (auto* x : sorted) {
      auto end = uninterrupted_end(*x);
      interrupted += end.interrupted ? 1 : 0;
      // The starts in [started, end] (equal starts sort either way).
      auto from = std::lower_bound(
        sorted.begin(), sorted.end(), x->started->mono_ns,
        [](const instance* a, int64_t t) { return a->started->mono_ns < t; });
      for (auto i = from; i != sorted.end(); ++i) {
        auto* y = *i;
        if (y->started->mono_ns > end.mono_ns)
          break;
        if (y == x || y->owner == x->owner)
          continue;
        c.fail(fmt::format("{}, while the instance of {} line {} ran, "
                           "neither paused nor killed, until {}: {}",
                           located(y->file(), *y->started), x->file().path(),
                           x->started->line, end.why,
                           overlap_words(words, group)),
               y->file().ref(*y->started));
        break;
      }
    }
  }
  auto summary = fmt::format(
    "{} over {} ({} cut short by a pause, kill or node_exit): none started "
    "while another ran unpaused, unkilled and unstopped",
    counted(xs.size(), words.one, words.many),
    counted(groups.size(), words.group_one, words.group_many), interrupted);
  if (!c.ok())
    summary = fmt::format(
      "{} while another ran unpaused, unkilled and unstopped",
      counted(c.violations(), "instance started", "instances started"));
  return std::move(c).finish(std::move(summary));
}

} // namespace troupe::chaos
