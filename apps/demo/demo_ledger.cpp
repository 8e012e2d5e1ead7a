#include "demo_ledger.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"

namespace troupe::demo {

namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

// Splits `text` at single spaces.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> result;
  size_t pos = 0;
  while (pos <= text.size()) {
    auto next = text.find(' ', pos);
    if (next == std::string_view::npos)
      next = text.size();
    result.push_back(text.substr(pos, next - pos));
    pos = next + 1;
  }
  return result;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Reads a number at the start of `text`; the rest goes to `rest`.
template <class T>
bool leading_number(std::string_view text, T& out, std::string_view& rest) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{} || end == text.data())
    return false;
  rest = text.substr(static_cast<size_t>(end - text.data()));
  return true;
}

constexpr std::string_view acquired_text = "ACQUIRED the lease, fencing token ";
constexpr std::string_view ledger_text = "wrote ledger entry #";
constexpr std::string_view ledger_token_text = " with fencing token ";
constexpr std::string_view lost_text = "LOST the lease (fencing token ";
constexpr std::string_view released_text = "released the lease (fencing token ";
constexpr std::string_view released_tail = ") and stopped";
constexpr std::string_view competing_text = "competing for the lease ";
constexpr std::string_view stopped_text = "stopped";

} // namespace

std::string format_ledger_record(const ledger_record& x) {
  return fmt::format("{} {} {} {}\n", x.token, x.owner, x.entry, x.mono_ns);
}

std::optional<ledger_record> parse_ledger_record(std::string_view line) {
  auto w = words(line);
  ledger_record result;
  if (w.size() != 4 || w[1].empty() || !parse_number(w[0], result.token)
      || !parse_number(w[2], result.entry)
      || !parse_number(w[3], result.mono_ns))
    return std::nullopt;
  result.owner = std::string{w[1]};
  return result;
}

std::string format_node_event(const node_event& x) {
  switch (x.kind) {
    case event_kind::competing:
      return fmt::format("{}: {}{}", x.owner, competing_text, x.text);
    case event_kind::acquired:
      return fmt::format("{}: {}{}", x.owner, acquired_text, x.token);
    case event_kind::ledger:
      return fmt::format("{}: {}{}{}{}", x.owner, ledger_text, x.entry,
                         ledger_token_text, x.token);
    case event_kind::lost:
      return fmt::format("{}: {}{}): {}", x.owner, lost_text, x.token, x.text);
    case event_kind::released:
      return fmt::format("{}: {}{}{}", x.owner, released_text, x.token,
                         released_tail);
    case event_kind::stopped:
      return fmt::format("{}: {}{}{}", x.owner, stopped_text,
                         x.text.empty() ? "" : " ", x.text);
  }
  return {};
}

std::optional<node_event> parse_node_event(std::string_view line) {
  auto colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0
      || line.substr(0, colon).find(' ') != std::string_view::npos)
    return std::nullopt;
  node_event ev;
  ev.owner = std::string{line.substr(0, colon)};
  auto body = line.substr(colon + 2);
  std::string_view rest;
  if (starts_with(body, acquired_text)) {
    ev.kind = event_kind::acquired;
    if (!parse_number(body.substr(acquired_text.size()), ev.token))
      return std::nullopt;
  } else if (starts_with(body, ledger_text)) {
    ev.kind = event_kind::ledger;
    if (!leading_number(body.substr(ledger_text.size()), ev.entry, rest)
        || !starts_with(rest, ledger_token_text)
        || !parse_number(rest.substr(ledger_token_text.size()), ev.token))
      return std::nullopt;
  } else if (starts_with(body, lost_text)) {
    ev.kind = event_kind::lost;
    if (!leading_number(body.substr(lost_text.size()), ev.token, rest)
        || !starts_with(rest, "): "))
      return std::nullopt;
    ev.text = std::string{rest.substr(3)};
  } else if (starts_with(body, released_text)) {
    ev.kind = event_kind::released;
    if (!leading_number(body.substr(released_text.size()), ev.token, rest)
        || rest != released_tail)
      return std::nullopt;
  } else if (starts_with(body, competing_text)) {
    ev.kind = event_kind::competing;
    ev.text = std::string{body.substr(competing_text.size())};
  } else if (starts_with(body, stopped_text)) {
    ev.kind = event_kind::stopped;
    rest = body.substr(stopped_text.size());
    if (!rest.empty() && rest[0] != ' ')
      return std::nullopt;
    ev.text = std::string{rest.empty() ? rest : rest.substr(1)};
  } else {
    return std::nullopt;
  }
  return ev;
}

bool ledger_fence::offer(const ledger_record& x) noexcept {
  if (x.token < highest_) {
    ++rejected_;
    return false;
  }
  highest_ = x.token;
  ++accepted_;
  return true;
}

std::string format_seconds(runtime::timespan d) {
  if (d < std::chrono::seconds{1})
    return fmt::format("{}ms", d.count() / 1'000'000);
  return fmt::format("{:.2f}s", static_cast<double>(d.count()) / 1e9);
}

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

// Kills and the freeze: each must have led to a takeover.
void judge_takeovers(const verdict_input& in, verdict& out) {
  std::vector<std::string> times;
  for (auto& t : in.takeovers) {
    if (t.successor.empty())
      out.violations.push_back(
        fmt::format("nobody took over after {} (token {}) was killed", t.victim,
                    t.victim_token));
    else
      times.push_back(describe(t));
  }
  out.report.push_back(fmt::format(
    "takeovers after SIGKILL: {} (each expected between ttl - ttl/3 and "
    "ttl {} after the kill: the record expires ttl after the last renewal)",
    times.empty() ? "none" : fmt::format("{}", fmt::join(times, ", ")),
    runtime::render_duration(in.ttl)));
  if (static_cast<int>(in.takeovers.size()) < in.kills_requested)
    out.violations.push_back(fmt::format("only {} of {} kills were carried out",
                                         in.takeovers.size(),
                                         in.kills_requested));
  if (!in.freeze_requested)
    return;
  if (!in.freeze || in.freeze->successor.empty()) {
    out.violations.push_back("nobody took over from the frozen holder");
    return;
  }
  auto& f = *in.freeze;
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
}

} // namespace

verdict judge(const verdict_input& in) {
  verdict out;
  // Acquisitions, from the outputs, in order of arrival.
  std::map<uint64_t, std::string> announced;
  std::vector<std::string> holders;
  std::set<std::string> distinct;
  std::string tokens;
  uint64_t previous = 0;
  for (auto& ev : in.events) {
    if (ev.kind != event_kind::acquired)
      continue;
    auto [i, added] = announced.emplace(ev.token, ev.owner);
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
      holders.push_back(ev.owner);
  }
  out.report.push_back(
    fmt::format("holders: {} ({})", holders.size(), fmt::join(holders, ", ")));
  out.report.push_back(fmt::format("fencing tokens in order of acquisition: "
                                   "{}",
                                   tokens.empty() ? "none" : tokens));
  judge_ledger(in, announced, out);
  judge_takeovers(in, out);
  if (static_cast<int>(holders.size()) < in.kills_requested + 1)
    out.violations.push_back(fmt::format("{} holders, expected at least {} "
                                         "(one more than the kills)",
                                         holders.size(),
                                         in.kills_requested + 1));
  return out;
}

} // namespace troupe::demo
