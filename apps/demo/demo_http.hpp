#pragma once

#include <string>
#include <vector>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/http_types.hpp"

/// @file
/// The demo launcher's blocking HTTP calls (the management endpoints, the
/// store), made concurrently on one runtime::http_engine.

namespace troupe::demo {

/// Blocking HTTP calls for the launcher's main thread. Not thread-safe: one
/// caller at a time.
class http_getter {
public:
  /// GETs every URL concurrently and waits for all; each answer (any
  /// status) or error (runtime::errc: connect failed, timeout, ...) at the
  /// URL's index. Each exchange ends within `timeout`.
  std::vector<runtime::expected<runtime::http_response>>
  get_all(const std::vector<std::string>& urls, runtime::timespan timeout);

  /// Sends every request concurrently and waits for all (as `get_all`).
  std::vector<runtime::expected<runtime::http_response>>
  call_all(std::vector<runtime::http_request> requests);

  /// One GET.
  runtime::expected<runtime::http_response> get(const std::string& url,
                                                runtime::timespan timeout);

private:
  runtime::http_engine engine_;
};

} // namespace troupe::demo
