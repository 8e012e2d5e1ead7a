#include "demo_ledger.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/format.h>

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
constexpr std::string_view released_tail = ")";
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

} // namespace troupe::demo
