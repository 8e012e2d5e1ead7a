#include "demo_verdict.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"

namespace troupe::demo {

namespace {

// The span of ledger claims made with one token.
struct tenure {
  std::string owner;
  int64_t first = 0;
  int64_t last = 0;
};

// One holder at a time: the claim spans of different tokens, ordered by
// their first claim, must not overlap and their tokens must increase.
void judge_tenures(const std::map<uint64_t, tenure>& tenures, verdict& out) {
  std::vector<std::pair<uint64_t, tenure>> order(tenures.begin(),
                                                 tenures.end());
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second.first < y.second.first;
  });
  for (size_t i = 1; i < order.size(); ++i) {
    auto& [prev_token, prev] = order[i - 1];
    auto& [token, cur] = order[i];
    if (token < prev_token)
      out.violations.push_back(
        fmt::format("token {} ({}) was first used after token {} ({})", token,
                    cur.owner, prev_token, prev.owner));
    if (prev.last >= cur.first)
      out.violations.push_back(fmt::format(
        "two holders at once: {} still claimed token {} {} after {} began "
        "with token {}",
        prev.owner, prev_token,
        format_seconds(runtime::timespan{prev.last - cur.first}), cur.owner,
        token));
  }
}

// The ledger part of the verdict.
void judge_ledger(const verdict_input& in,
                  const std::map<uint64_t, std::string>& announced,
                  verdict& out) {
  ledger_fence fence;
  std::map<uint64_t, tenure> tenures;
  size_t line_no = 0;
  size_t stale_accepted = 0;
  std::istringstream lines{in.ledger_text};
  std::string line;
  while (std::getline(lines, line)) {
    ++line_no;
    auto rec = parse_ledger_record(line);
    if (!rec) {
      out.violations.push_back(
        fmt::format("ledger line {} is malformed: \"{}\"", line_no, line));
      continue;
    }
    auto highest_before = fence.highest_token();
    if (fence.offer(*rec) && rec->token < highest_before)
      ++stale_accepted; // the fence itself broke
    auto [t, added] = tenures.emplace(
      rec->token, tenure{rec->owner, rec->mono_ns, rec->mono_ns});
    if (!added && t->second.owner != rec->owner)
      out.violations.push_back(
        fmt::format("ledger line {}: token {} used by {} and by {}", line_no,
                    rec->token, t->second.owner, rec->owner));
    t->second.first = std::min(t->second.first, rec->mono_ns);
    t->second.last = std::max(t->second.last, rec->mono_ns);
    auto a = announced.find(rec->token);
    if (a == announced.end() || a->second != rec->owner)
      out.violations.push_back(fmt::format(
        "ledger line {}: {} wrote with token {}, which it never announced as "
        "acquired",
        line_no, rec->owner, rec->token));
  }
  judge_tenures(tenures, out);
  if (stale_accepted > 0)
    out.violations.push_back(
      fmt::format("{} stale-token records were accepted", stale_accepted));
  out.report.push_back(fmt::format(
    "ledger: {} records, {} accepted; stale-token records: {} rejected by "
    "the fence, {} accepted (any accepted one would be a violation)",
    line_no, fence.accepted(), fence.rejected(), stale_accepted));
}

std::string describe(const takeover& t) {
  return fmt::format("{} -> {} in {}", t.victim, t.successor,
                     format_seconds(t.elapsed));
}

// "1 other node was" / "2 other nodes were".
std::string count_nodes(int n, std::string_view adjective) {
  return fmt::format("{} {}node{} {}", n, adjective, n == 1 ? "" : "s",
                     n == 1 ? "was" : "were");
}

// A takeover that did not come: a violation only if somebody could have
// taken over. Returns true (the plan stops there either way).
bool judge_missing_takeover(const takeover& t, std::string_view how,
                            verdict& out) {
  auto what = fmt::format("nobody took over after {} (token {}) was {}",
                          t.victim, t.victim_token, how);
  if (t.live_others > 0)
    out.violations.push_back(fmt::format("{} although {} running", what,
                                         count_nodes(t.live_others, "other ")));
  else
    out.report.push_back(fmt::format("{}: no other node was running, so "
                                     "nobody could (not a violation)",
                                     what));
  return true;
}

// Kills and the freeze: each must have led to a takeover while a node
// could take over. Returns true if the plan was cut short (judged here).
bool judge_takeovers(const verdict_input& in, verdict& out) {
  bool cut = false;
  std::vector<std::string> times;
  for (auto& t : in.takeovers) {
    if (t.successor.empty())
      cut = judge_missing_takeover(t, "killed", out);
    else
      times.push_back(describe(t));
  }
  out.report.push_back(fmt::format(
    "takeovers after SIGKILL: {} (each expected between ttl - ttl/3 and "
    "ttl {} after the kill: the record expires ttl after the last renewal)",
    times.empty() ? "none" : fmt::format("{}", fmt::join(times, ", ")),
    runtime::render_duration(in.ttl)));
  if (in.ended_early) {
    cut = true;
    auto& e = *in.ended_early;
    if (e.live_nodes > 0)
      out.violations.push_back(fmt::format("{} although {} running", e.why,
                                           count_nodes(e.live_nodes, "")));
    else
      out.report.push_back(fmt::format(
        "{} (not a violation: no node was left to carry on)", e.why));
  }
  if (!cut && static_cast<int>(in.takeovers.size()) < in.kills_requested)
    out.violations.push_back(fmt::format("only {} of {} kills were carried out",
                                         in.takeovers.size(),
                                         in.kills_requested));
  if (!in.freeze_requested)
    return cut;
  if (!in.freeze) {
    if (!cut)
      out.violations.push_back("the holder was never frozen");
    return cut;
  }
  auto& f = *in.freeze;
  if (f.successor.empty())
    return judge_missing_takeover(f, "frozen", out);
  auto reported = std::any_of(in.events.begin(), in.events.end(), [&](auto& e) {
    return e.kind == event_kind::lost && e.owner == f.victim
           && e.token == f.victim_token;
  });
  out.report.push_back(fmt::format(
    "takeover from a frozen holder (SIGSTOP): "
    "{}; resumed, it {}",
    describe(f), reported ? "reported the loss" : "never reported the loss"));
  if (!reported)
    out.violations.push_back(fmt::format(
      "{} was resumed after losing token {} but never reported the loss",
      f.victim, f.victim_token));
  return cut;
}

// What happened that the demo did not cause: nodes that ended by
// themselves, holders that lost the lease without a freeze.
void report_unplanned(const verdict_input& in, verdict& out) {
  for (auto& n : in.nodes)
    if (n.ended_by_itself)
      out.report.push_back(
        fmt::format("{} {} before the demo stopped it (stderr: {})", n.name,
                    n.exit, n.stderr_tail));
  for (auto& e : in.events) {
    if (e.kind != event_kind::lost)
      continue;
    if (in.freeze && e.owner == in.freeze->victim
        && e.token == in.freeze->victim_token)
      continue;
    out.report.push_back(
      fmt::format("{} lost token {} without a kill or a freeze ({}); not a "
                  "violation: the demo waited for the next holder",
                  e.owner, e.token, e.text));
  }
}

// The acquisitions, from the outputs, in order of arrival.
struct acquisitions {
  std::map<uint64_t, std::string> announced; // token -> owner
  std::vector<std::string> holders;          // distinct, in order
};

acquisitions judge_acquisitions(const verdict_input& in, verdict& out) {
  acquisitions result;
  std::set<std::string> distinct;
  std::string tokens;
  uint64_t previous = 0;
  for (auto& ev : in.events) {
    if (ev.kind != event_kind::acquired)
      continue;
    auto [i, added] = result.announced.emplace(ev.token, ev.owner);
    if (!added && i->second != ev.owner)
      out.violations.push_back(fmt::format("token {} acquired by {} and by {}",
                                           ev.token, i->second, ev.owner));
    if (ev.token <= previous)
      out.violations.push_back(
        fmt::format("{} acquired token {} after token {} was issued: tokens "
                    "must strictly increase",
                    ev.owner, ev.token, previous));
    previous = std::max(previous, ev.token);
    tokens += fmt::format("{}{}", tokens.empty() ? "" : " < ", ev.token);
    if (distinct.insert(ev.owner).second)
      result.holders.push_back(ev.owner);
  }
  out.report.push_back(result.holders.empty()
                         ? std::string{"holders: none"}
                         : fmt::format("holders: {} ({})",
                                       result.holders.size(),
                                       fmt::join(result.holders, ", ")));
  out.report.push_back(fmt::format("fencing tokens in order of acquisition: "
                                   "{}",
                                   tokens.empty() ? "none" : tokens));
  return result;
}

// "node-1 exited with code 2: <tail>".
std::string describe_end(const node_report& n) {
  return fmt::format("{} {}: {}", n.name, n.exit, n.stderr_tail);
}

} // namespace

std::string stderr_tail(std::string_view text, size_t max_lines) {
  std::vector<std::string_view> lines;
  size_t end = text.size();
  while (end > 0 && lines.size() < max_lines) {
    auto begin = text.rfind('\n', end - 1);
    begin = begin == std::string_view::npos ? 0 : begin + 1;
    auto line = text.substr(begin, end - begin);
    if (auto last = line.find_last_not_of(" \t\r\n");
        last != std::string_view::npos)
      lines.push_back(line.substr(0, std::min<size_t>(last + 1, 200)));
    end = begin == 0 ? 0 : begin - 1;
  }
  if (lines.empty())
    return "nothing on stderr";
  std::reverse(lines.begin(), lines.end());
  return fmt::format("{}", fmt::join(lines, " | "));
}

std::optional<std::string> find_setup_error(const verdict_input& in) {
  if (in.interrupted || in.nodes.empty())
    return std::nullopt;
  auto by_itself = std::find_if(in.nodes.begin(), in.nodes.end(),
                                [](auto& n) { return n.ended_by_itself; });
  std::set<std::string> killed;
  for (auto& t : in.takeovers)
    killed.insert(t.victim);
  auto left_to_stop
    = std::count_if(in.nodes.begin(), in.nodes.end(), [&](auto& n) {
        return !n.ended_by_itself && killed.count(n.name) == 0;
      });
  auto has = [&](event_kind k) {
    return std::any_of(in.events.begin(), in.events.end(),
                       [&](auto& e) { return e.kind == k; });
  };
  if (by_itself != in.nodes.end() && left_to_stop == 0)
    return fmt::format("every node process exited: {}",
                       describe_end(*by_itself));
  if (has(event_kind::acquired))
    return std::nullopt;
  if (by_itself != in.nodes.end())
    return fmt::format("no node acquired the lease: {}",
                       describe_end(*by_itself));
  auto& first = in.nodes.front();
  return fmt::format(
    "{} within {} (2 * ttl + 10s); {} wrote to stderr: {}",
    has(event_kind::competing) ? "no node acquired the lease"
                               : "no node announced \"competing\"",
    format_seconds(in.holder_bound), first.name, first.stderr_tail);
}

verdict judge(const verdict_input& in) {
  verdict out;
  out.setup_error = find_setup_error(in);
  auto acq = judge_acquisitions(in, out);
  judge_ledger(in, acq.announced, out);
  report_unplanned(in, out);
  if (out.setup_error)
    return out; // the plan could not run: nothing more to judge
  bool cut = judge_takeovers(in, out);
  // Interrupted: the launcher counts only the kills it carried out, but
  // the first holder may not have come yet.
  if (!cut && !in.interrupted
      && static_cast<int>(acq.holders.size()) < in.kills_requested + 1)
    out.violations.push_back(fmt::format("{} holders, expected at least {} "
                                         "(one more than the kills)",
                                         acq.holders.size(),
                                         in.kills_requested + 1));
  return out;
}

} // namespace troupe::demo
