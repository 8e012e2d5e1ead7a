#include "troupe/lease/file_lease_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"

namespace troupe::lease {

namespace {

bool is_plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

runtime::error format_error(size_t line, std::string message) {
  return runtime::make_error(errc::backend_rejected,
                             fmt::format("line {}: {}", line, message));
}

// A line as it may be shown in an error message: escaped and shortened.
std::string quote(std::string_view text) {
  auto esc = escape_lease_text(text.substr(0, 40));
  return fmt::format("\"{}\"{}", esc, text.size() > 40 ? "..." : "");
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

enum class field : uint8_t {
  boot_id,
  holder,
  acquisition,
  token,
  expires_at_ns,
  last_token,
  count
};

constexpr std::array<std::string_view, static_cast<size_t>(field::count)>
  field_names{"boot_id", "holder",        "acquisition",
              "token",   "expires_at_ns", "last_token"};

// Stores one `key value` line into `out`; an error names what was wrong.
std::optional<std::string> parse_field(field f, std::string_view value,
                                       lease_file_record& out) {
  auto& rec = out.record;
  auto number = [&](auto& dst) -> std::optional<std::string> {
    if (!parse_number(value, dst))
      return fmt::format("{} {} is not a number",
                         field_names[static_cast<size_t>(f)], quote(value));
    return std::nullopt;
  };
  auto text = [&](std::string& dst) -> std::optional<std::string> {
    auto raw = unescape_lease_text(value);
    if (!raw)
      return fmt::format("{} {} has a malformed %-escape",
                         field_names[static_cast<size_t>(f)], quote(value));
    dst = std::move(*raw);
    return std::nullopt;
  };
  switch (f) {
    case field::boot_id:
      return text(out.boot_id);
    case field::holder:
      return text(rec.holder);
    case field::acquisition:
      return number(rec.acquisition);
    case field::token:
      return number(rec.token);
    case field::expires_at_ns: {
      int64_t ns = 0;
      if (auto err = number(ns))
        return err;
      rec.expires_at = timestamp{timespan{ns}};
      return std::nullopt;
    }
    case field::last_token:
      return number(rec.last_token);
    case field::count:
      break;
  }
  return "unknown field";
}

} // namespace

std::string escape_lease_text(std::string_view text) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = text[i];
    if (is_plain(c) && !(i == 0 && c == '.')) {
      result += c;
    } else {
      auto byte = static_cast<unsigned char>(c);
      result += '%';
      result += digits[byte >> 4];
      result += digits[byte & 0x0F];
    }
  }
  return result;
}

std::optional<std::string> unescape_lease_text(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      result += text[i];
      continue;
    }
    if (i + 2 >= text.size())
      return std::nullopt;
    auto hi = hex_value(text[i + 1]);
    auto lo = hex_value(text[i + 2]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    result += static_cast<char>((hi << 4) | lo);
    i += 2;
  }
  return result;
}

std::string lease_file_name(std::string_view name) {
  return escape_lease_text(name) + ".lease";
}

std::string encode_lease_file(const lease_file_record& x) {
  auto& rec = x.record;
  auto holder = escape_lease_text(rec.holder);
  return fmt::format("version {}\n"
                     "boot_id {}\n"
                     "holder{}{}\n"
                     "acquisition {}\n"
                     "token {}\n"
                     "expires_at_ns {}\n"
                     "last_token {}\n"
                     "end\n",
                     lease_file_version, escape_lease_text(x.boot_id),
                     holder.empty() ? "" : " ", holder, rec.acquisition,
                     rec.token, rec.expires_at.time_since_epoch().count(),
                     rec.last_token);
}

runtime::expected<lease_file_record> decode_lease_file(std::string_view text) {
  lease_file_record result;
  if (text.empty())
    return result;
  std::array<size_t, static_cast<size_t>(field::count)> seen_at{};
  size_t line_no = 0;
  size_t pos = 0;
  bool ended = false;
  while (!ended && pos < text.size()) {
    ++line_no;
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos)
      return format_error(line_no, fmt::format("{} is not terminated by a "
                                               "newline (truncated record?)",
                                               quote(text.substr(pos))));
    auto line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto space = line.find(' ');
    auto key = line.substr(0, space);
    auto value = space == std::string_view::npos ? std::string_view{}
                                                 : line.substr(space + 1);
    if (line_no == 1) {
      int version = 0;
      if (key != "version")
        return format_error(1, fmt::format("expected \"version {}\", found {}",
                                           lease_file_version, quote(line)));
      if (!parse_number(value, version) || version != lease_file_version)
        return format_error(1, fmt::format("unsupported version {} (this "
                                           "build reads version {})",
                                           quote(value), lease_file_version));
      continue;
    }
    if (line == "end") {
      ended = true;
      break;
    }
    auto i = std::find(field_names.begin(), field_names.end(), key);
    if (i == field_names.end())
      return format_error(line_no, fmt::format("unknown key {}", quote(key)));
    auto idx = static_cast<size_t>(i - field_names.begin());
    if (seen_at[idx] != 0)
      return format_error(line_no, fmt::format("duplicate key {} (first at "
                                               "line {})",
                                               key, seen_at[idx]));
    seen_at[idx] = line_no;
    if (auto err = parse_field(static_cast<field>(idx), value, result))
      return format_error(line_no, std::move(*err));
  }
  if (!ended)
    return format_error(line_no + 1, "missing \"end\" (truncated record?)");
  for (size_t idx = 0; idx < field_names.size(); ++idx)
    if (seen_at[idx] == 0)
      return format_error(line_no, fmt::format("missing key \"{}\" before end",
                                               field_names[idx]));
  auto token_line = seen_at[static_cast<size_t>(field::token)];
  if (result.record.token > result.record.last_token)
    return format_error(
      token_line, fmt::format("token {} exceeds last_token {}",
                              result.record.token, result.record.last_token));
  return result;
}

} // namespace troupe::lease
