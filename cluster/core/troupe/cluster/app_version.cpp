#include "troupe/cluster/app_version.hpp"

#include <charconv>
#include <tuple>

#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"

namespace troupe::cluster {

namespace {

bool qualifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

} // namespace

std::strong_ordering operator<=>(const app_version& x,
                                 const app_version& y) noexcept {
  auto numbers
    = [](const app_version& v) { return std::tie(v.major, v.minor, v.patch); };
  if (auto c = numbers(x) <=> numbers(y); c != 0)
    return c;
  // A release is newer than its qualified pre-releases.
  if (x.qualifier.empty() != y.qualifier.empty())
    return x.qualifier.empty() ? std::strong_ordering::greater
                               : std::strong_ordering::less;
  auto c = x.qualifier.compare(y.qualifier);
  return c < 0   ? std::strong_ordering::less
         : c > 0 ? std::strong_ordering::greater
                 : std::strong_ordering::equal;
}

runtime::expected<app_version> parse_app_version(std::string_view text) {
  auto bad = [text](std::string_view why) {
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("{:?} is not a version: {} (expected one to three numbers "
                  "separated by '.', e.g. \"1.2.3\", optionally followed by a "
                  "qualifier after '-', e.g. \"1.2.3-RC1\")",
                  text, why));
  };
  if (text.empty())
    return bad("it is empty");
  app_version out;
  auto numbers = text;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    numbers = text.substr(0, dash);
    auto q = text.substr(dash + 1);
    if (q.empty())
      return bad("the qualifier after '-' is empty");
    for (char c : q)
      if (!qualifier_char(c))
        return bad(fmt::format("the qualifier {:?} may only hold letters, "
                               "digits, '.', '-' and '_'",
                               q));
    out.qualifier = std::string{q};
  }
  uint32_t* fields[] = {&out.major, &out.minor, &out.patch};
  size_t n = 0;
  for (size_t pos = 0;; ++n) {
    auto dot = numbers.find('.', pos);
    auto part = numbers.substr(
      pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (n == 3)
      return bad("it has more than three numbers");
    auto [ptr, ec]
      = std::from_chars(part.data(), part.data() + part.size(), *fields[n]);
    if (part.empty() || ec == std::errc::invalid_argument
        || ptr != part.data() + part.size())
      return bad(fmt::format("{:?} is not a number", part));
    if (ec == std::errc::result_out_of_range)
      return bad(fmt::format("{} is larger than 4294967295", part));
    if (dot == std::string_view::npos)
      break;
    pos = dot + 1;
  }
  return out;
}

std::string to_string(const app_version& x) {
  auto out = fmt::format("{}.{}.{}", x.major, x.minor, x.patch);
  if (!x.qualifier.empty()) {
    out += '-';
    out += x.qualifier;
  }
  return out;
}

} // namespace troupe::cluster
