#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The demo's ids and the app API's query string. Pure; thread-safe as
/// plain functions.

namespace troupe::demo {

/// True for an id the demo uses for accounts and deposits: 1 to 64 bytes of
/// `[A-Za-z0-9_.-]` (safe in a URL path without escaping).
bool is_demo_id(std::string_view id) noexcept;

/// A deposit request's fields, from the query string.
struct deposit_query {
  std::string account;
  std::string deposit;
  /// Cents, 1 .. 1,000,000,000.
  int64_t amount = 0;
};

/// Parses the query of `target` (`/deposit?account=a-1&deposit=d-7&amount=5`,
/// percent-encoded, any order; unknown parameters are ignored). Errors
/// (management::errc::invalid_request, the reason for a 400) name the
/// parameter: a missing or repeated one, a broken %-escape, an id that is
/// not `is_demo_id`, an amount that is not a whole number in range.
runtime::expected<deposit_query> parse_deposit_query(std::string_view target);

} // namespace troupe::demo
