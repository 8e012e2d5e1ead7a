#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "troupe/runtime/assert.hpp"

/// @file
/// CAF-free error values for cores and edges. The shell converts an `error`
/// into a `caf::error` of the same category and code (runtime/shell
/// caf_glue.hpp), so one failure has one code everywhere.

namespace troupe::runtime {

/// An operating error: a category (the module, e.g. "lease"), the module's
/// `errc` value as a number, and a message that names what was wrong and
/// where. A default-constructed error means "no error" (`code == 0`).
struct error {
  std::string category;
  uint8_t code = 0;
  std::string message;

  /// True if this value holds an error.
  explicit operator bool() const noexcept {
    return code != 0;
  }
};

/// Makes an error from a module's `errc` enum. Each module provides
/// `const char* category_name(errc)`, found by ADL.
template <class Errc>
error make_error(Errc code, std::string message) {
  return error{category_name(code), static_cast<uint8_t>(code),
               std::move(message)};
}

/// A value or an error (C++20 has no std::expected). Accessing the wrong
/// alternative is a programmer error and asserts.
template <class T>
class expected {
public:
  expected(T value) : data_(std::move(value)) {}

  expected(runtime::error err) : data_(std::move(err)) {
    TROUPE_ASSERT(std::get<runtime::error>(data_).code != 0);
  }

  bool has_value() const noexcept {
    return data_.index() == 0;
  }

  explicit operator bool() const noexcept {
    return has_value();
  }

  T& value() & {
    TROUPE_ASSERT(has_value());
    return std::get<T>(data_);
  }

  const T& value() const& {
    TROUPE_ASSERT(has_value());
    return std::get<T>(data_);
  }

  T&& value() && {
    TROUPE_ASSERT(has_value());
    return std::get<T>(std::move(data_));
  }

  T& operator*() & {
    return value();
  }

  const T& operator*() const& {
    return value();
  }

  T* operator->() {
    return &value();
  }

  const T* operator->() const {
    return &value();
  }

  const runtime::error& error() const {
    TROUPE_ASSERT(!has_value());
    return std::get<runtime::error>(data_);
  }

private:
  std::variant<T, runtime::error> data_;
};

} // namespace troupe::runtime
