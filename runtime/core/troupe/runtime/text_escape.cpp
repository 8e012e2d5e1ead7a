#include "troupe/runtime/text_escape.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::runtime {

namespace {

// `text` cut to `max_bytes` with control bytes as \xNN; with `strict`
// also '"' and '\\' escaped and bytes beyond ASCII as \xNN.
std::string escape(std::string_view text, size_t max_bytes, bool strict) {
  std::string out;
  auto n = std::min(text.size(), max_bytes);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (strict && (c == '"' || c == '\\'))
      out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c == 0x7f || (strict && c > 0x7f))
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (text.size() > max_bytes)
    out += "...";
  return out;
}

} // namespace

std::string escape_controls(std::string_view text, size_t max_bytes) {
  return escape(text, max_bytes, false);
}

std::string escape_for_message(std::string_view text, size_t max_bytes) {
  return escape(text, max_bytes, true);
}

} // namespace troupe::runtime
