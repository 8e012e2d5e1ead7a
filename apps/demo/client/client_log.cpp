#include "client/client_log.hpp"

#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace troupe::demo::client {

namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// Splits off the first `n` space-separated fields; the rest (possibly
// empty) is the last element.
std::vector<std::string_view> split(std::string_view line, size_t n) {
  std::vector<std::string_view> out;
  while (out.size() < n) {
    auto sp = line.find(' ');
    if (sp == std::string_view::npos) {
      out.push_back(line);
      line = {};
      break;
    }
    out.push_back(line.substr(0, sp));
    line = line.substr(sp + 1);
  }
  out.push_back(line);
  return out;
}

} // namespace

const char* to_string(client_event_kind x) noexcept {
  switch (x) {
    case client_event_kind::sent:
      return "sent";
    case client_event_kind::acked:
      return "acked";
    case client_event_kind::failed:
      return "failed";
    case client_event_kind::unfinished:
      return "unfinished";
  }
  return "unknown";
}

std::string format_client_event(const client_event& x) {
  switch (x.kind) {
    case client_event_kind::sent:
      return fmt::format("{} sent {} {} {}\n", x.mono_ns, x.deposit, x.account,
                         x.amount);
    case client_event_kind::acked:
      return fmt::format("{} acked {} {} {} {}{}{}\n", x.mono_ns, x.deposit,
                         x.account, x.amount, x.seq, x.node.empty() ? "" : " ",
                         x.node);
    case client_event_kind::failed:
    case client_event_kind::unfinished: {
      auto reason = x.reason;
      for (auto& c : reason)
        if (c == '\n' || c == '\r')
          c = ' ';
      return fmt::format("{} {} {} {}\n", x.mono_ns, to_string(x.kind),
                         x.deposit, reason);
    }
  }
  return {};
}

std::optional<client_event> parse_client_event(std::string_view line) {
  // mono_ns kind deposit, then the kind's own fields.
  auto head = split(line, 3);
  if (head.size() != 4)
    return std::nullopt;
  client_event x;
  if (!parse_number(head[0], x.mono_ns) || head[2].empty())
    return std::nullopt;
  x.deposit = std::string{head[2]};
  auto rest = head[3];
  if (head[1] == "failed" || head[1] == "unfinished") {
    x.kind = head[1] == "failed" ? client_event_kind::failed
                                 : client_event_kind::unfinished;
    x.reason = std::string{rest};
    return x;
  }
  if (head[1] == "sent")
    x.kind = client_event_kind::sent;
  else if (head[1] == "acked")
    x.kind = client_event_kind::acked;
  else
    return std::nullopt;
  auto want = x.kind == client_event_kind::sent ? 2u : 3u;
  auto fields = split(rest, want);
  // split leaves the remainder last: empty, or (acked) the node.
  if (fields.size() != want + 1 || rest.ends_with(' '))
    return std::nullopt;
  if (!fields.back().empty()) {
    if (x.kind != client_event_kind::acked
        || fields.back().find(' ') != std::string_view::npos)
      return std::nullopt;
    x.node = std::string{fields.back()};
  }
  if (fields[0].empty() || !parse_number(fields[1], x.amount) || x.amount <= 0)
    return std::nullopt;
  x.account = std::string{fields[0]};
  if (x.kind == client_event_kind::acked && !parse_number(fields[2], x.seq))
    return std::nullopt;
  return x;
}

} // namespace troupe::demo::client
