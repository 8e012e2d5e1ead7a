#pragma once

#include <string>

#include <fmt/format.h>

/// @file
/// A wrapper that keeps secrets out of logs.

namespace troupe::runtime {

/// A secret value (password, token, key). It formats as `<redacted>` and has
/// no implicit conversion to a string: `reveal()` is the only way to read it.
/// A plain value; thread-safe as any value.
class secret {
public:
  secret() = default;

  explicit secret(std::string value) : value_(std::move(value)) {}

  /// The secret itself. Never pass the result to a logger.
  const std::string& reveal() const noexcept {
    return value_;
  }

  bool empty() const noexcept {
    return value_.empty();
  }

  friend bool operator==(const secret&, const secret&) = default;

private:
  std::string value_;
};

} // namespace troupe::runtime

template <>
struct fmt::formatter<troupe::runtime::secret>
  : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const troupe::runtime::secret&, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format("<redacted>", ctx);
  }
};
