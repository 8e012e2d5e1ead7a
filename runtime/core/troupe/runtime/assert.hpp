#pragma once

/// @file
/// TROUPE_ASSERT: aborts with file, line and the failed condition when a
/// programmer error (a broken invariant) is detected. Expected negative
/// outcomes are values and operating errors are error values; neither ever
/// goes through this macro (STYLE.md §6).
///
/// The check stays on in every build type: the conditions troupe asserts are
/// cheap, and continuing with a broken invariant in a cluster protocol is
/// worse than a crash. Thread-safe.

namespace troupe::runtime::detail {

/// Prints "file:line: assertion failed: expr" to stderr and aborts.
[[noreturn]] void assertion_failed(const char* expr, const char* file,
                                   int line) noexcept;

} // namespace troupe::runtime::detail

#define TROUPE_ASSERT(cond)                                                    \
  do {                                                                         \
    if (!(cond))                                                               \
      ::troupe::runtime::detail::assertion_failed(#cond, __FILE__, __LINE__);  \
  } while (false)
