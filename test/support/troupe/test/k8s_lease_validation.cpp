// Field rules of the Lease API: MicroTime parsing (Go's time.Parse with the
// RFC3339Micro layout), DNS-1123 names and ValidateLease's spec checks.
// Declared in k8s_lease_codec.hpp.

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "troupe/test/k8s_lease_codec.hpp"

namespace troupe::test {

namespace {

constexpr std::string_view micro_layout = "2006-01-02T15:04:05.000000Z07:00";

// Go's time.quote: "..." with \x escapes for bytes outside printable ASCII.
std::string go_time_quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x80 || c < 0x20) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      if (c == '"' || c == '\\')
        out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool is_digit(std::string_view s, size_t i) {
  return i < s.size() && s[i] >= '0' && s[i] <= '9';
}

// Go's getnum: one or two digits (exactly two when `fixed`).
bool getnum(std::string_view& s, bool fixed, int& out) {
  if (!is_digit(s, 0))
    return false;
  if (!is_digit(s, 1)) {
    if (fixed)
      return false;
    out = s[0] - '0';
    s.remove_prefix(1);
    return true;
  }
  out = (s[0] - '0') * 10 + (s[1] - '0');
  s.remove_prefix(2);
  return true;
}

// The parsed fields of one MicroTime.
struct civil_time {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int micros = 0;
  int offset_seconds = 0;
};

// One layout element: parses the front of `v` into `t`. Returns false on a
// syntax error; sets `range` on a value out of range.
bool parse_element(std::string_view elem, std::string_view& v, civil_time& t,
                   std::string& range) {
  if (elem == "2006") {
    if (v.size() < 4)
      return false;
    for (size_t i = 0; i < 4; ++i)
      if (!is_digit(v, i))
        return false;
    t.year = std::stoi(std::string{v.substr(0, 4)});
    v.remove_prefix(4);
    return true;
  }
  auto two = [&](bool fixed, int& out, int lo, int hi, const char* what) {
    if (!getnum(v, fixed, out))
      return false;
    if (out < lo || out > hi)
      range = what;
    return true;
  };
  if (elem == "01")
    return two(true, t.month, 1, 12, "month");
  if (elem == "02")
    return two(true, t.day, 0, 99, "day"); // checked after the loop
  if (elem == "15")
    return two(false, t.hour, 0, 23, "hour");
  if (elem == "04")
    return two(true, t.minute, 0, 59, "minute");
  if (elem == "05")
    return two(true, t.second, 0, 59, "second");
  if (elem == ".000000") {
    if (v.size() < 7 || (v[0] != '.' && v[0] != ','))
      return false;
    for (size_t i = 1; i < 7; ++i)
      if (!is_digit(v, i))
        return false;
    t.micros = std::stoi(std::string{v.substr(1, 6)});
    v.remove_prefix(7);
    return true;
  }
  // "Z07:00"
  if (!v.empty() && v[0] == 'Z') {
    v.remove_prefix(1);
    return true;
  }
  if (v.size() < 6 || v[3] != ':')
    return false;
  auto hh = v.substr(1, 2);
  auto mm = v.substr(4, 2);
  int hr = 0;
  int min = 0;
  if (!getnum(hh, true, hr) || !getnum(mm, true, min))
    return false;
  if (hr > 24)
    range = "time zone offset hour";
  if (min > 60)
    range = "time zone offset minute";
  if (v[0] != '+' && v[0] != '-')
    return false;
  t.offset_seconds = (v[0] == '-' ? -1 : 1) * (hr * 60 + min) * 60;
  v.remove_prefix(6);
  return true;
}

int days_in(int month, int year) {
  using namespace std::chrono;
  return static_cast<int>(static_cast<unsigned>(
    (std::chrono::year{year} / std::chrono::month{static_cast<unsigned>(month)}
     / last)
      .day()));
}

std::string canonical_utc(const civil_time& t) {
  using namespace std::chrono;
  auto days = sys_days{std::chrono::year{t.year}
                       / std::chrono::month{static_cast<unsigned>(t.month)}
                       / std::chrono::day{static_cast<unsigned>(t.day)}};
  auto tp = days + hours{t.hour} + minutes{t.minute} + seconds{t.second}
            - seconds{t.offset_seconds};
  auto day_start = floor<std::chrono::days>(tp);
  year_month_day ymd{day_start};
  hh_mm_ss hms{tp - day_start};
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:06d}Z",
                     static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count(), t.micros);
}

} // namespace

k8s_micro_time k8s_parse_micro_time(std::string_view value) {
  // (literal prefix, layout element) pairs of RFC3339Micro, as Go's
  // nextStdChunk splits the layout.
  static constexpr std::pair<std::string_view, std::string_view> chunks[] = {
    {"", "2006"}, {"-", "01"}, {"-", "02"},     {"T", "15"},
    {":", "04"},  {":", "05"}, {"", ".000000"}, {"", "Z07:00"},
  };
  auto head = fmt::format("parsing time {}", go_time_quote(value));
  auto cannot = [&](std::string_view rest, std::string_view elem) {
    return k8s_micro_time{"", fmt::format("{} as {}: cannot parse {} as {}",
                                          head, go_time_quote(micro_layout),
                                          go_time_quote(rest),
                                          go_time_quote(elem))};
  };
  civil_time t;
  auto v = value;
  for (auto [prefix, elem] : chunks) {
    if (!prefix.empty()) {
      if (v.empty() || v[0] != prefix[0])
        return cannot(v, prefix);
      v.remove_prefix(1);
    }
    auto hold = v;
    std::string range;
    bool ok = parse_element(elem, v, t, range);
    if (!range.empty())
      return {"", fmt::format("{}: {} out of range", head, range)};
    if (!ok)
      return cannot(hold, elem);
  }
  if (!v.empty())
    return {"", fmt::format("{}: extra text: {}", head, go_time_quote(v))};
  if (t.day < 1 || t.day > days_in(t.month, t.year))
    return {"", fmt::format("{}: day out of range", head)};
  return {canonical_utc(t), ""};
}

std::vector<std::string> k8s_dns1123_subdomain_errors(std::string_view name) {
  std::vector<std::string> errs;
  if (name.size() > 253)
    errs.emplace_back("must be no more than 253 characters");
  auto alnum
    = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty();
  for (size_t start = 0; ok && start <= name.size();) {
    auto end = name.find('.', start);
    auto label = name.substr(start, end == std::string_view::npos
                                      ? std::string_view::npos
                                      : end - start);
    ok = !label.empty() && alnum(label.front()) && alnum(label.back());
    for (char c : label)
      ok = ok && (alnum(c) || c == '-');
    if (end == std::string_view::npos)
      break;
    start = end + 1;
  }
  if (!ok)
    errs.emplace_back(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
      "characters, '-' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  return errs;
}

std::vector<k8s_status_cause> k8s_validate_lease_name(std::string_view name) {
  if (name.empty())
    return {{"FieldValueRequired",
             "Required value: name or generateName is required",
             "metadata.name"}};
  std::vector<k8s_status_cause> causes;
  for (auto& msg : k8s_dns1123_subdomain_errors(name))
    causes.push_back(
      {"FieldValueInvalid",
       fmt::format("Invalid value: {}: {}", go_time_quote(name), msg),
       "metadata.name"});
  return causes;
}

std::vector<k8s_status_cause>
k8s_validate_lease_spec(const k8s_lease_spec& spec) {
  std::vector<k8s_status_cause> causes;
  if (spec.lease_duration_seconds && *spec.lease_duration_seconds <= 0)
    causes.push_back({"FieldValueInvalid",
                      fmt::format("Invalid value: {}: must be greater than 0",
                                  *spec.lease_duration_seconds),
                      "spec.leaseDurationSeconds"});
  if (spec.lease_transitions && *spec.lease_transitions < 0)
    causes.push_back({"FieldValueInvalid",
                      fmt::format("Invalid value: {}: must be greater than or "
                                  "equal to 0",
                                  *spec.lease_transitions),
                      "spec.leaseTransitions"});
  // Go appends "strategy" twice to the path (ValidateLeaseSpec passes
  // spec.strategy to ValidateCoordinatedLeaseStrategy, which adds it again).
  if (spec.strategy && spec.strategy->find('/') == std::string::npos
      && *spec.strategy != "OldestEmulationVersion")
    causes.push_back({"FieldValueNotSupported",
                      fmt::format("Unsupported value: {}: supported values: "
                                  "\"OldestEmulationVersion\"",
                                  go_time_quote(*spec.strategy)),
                      "spec.strategy.strategy"});
  if (spec.preferred_holder && !spec.preferred_holder->empty()
      && (!spec.strategy || spec.strategy->empty()))
    causes.push_back({"FieldValueForbidden",
                      "Forbidden: may only be specified if `strategy` is "
                      "defined",
                      "spec.preferredHolder"});
  return causes;
}

} // namespace troupe::test
