#pragma once

#include <future>
#include <memory>
#include <optional>

#include "troupe/lease/lease_backend.hpp"

/// @file
/// A blocking call of a backend, for tools, benchmarks and backend tests.
/// Never use it inside an actor: the lease actor is asynchronous.

namespace troupe::lease {

/// Calls `op` and waits up to `timeout` for the reply; `nullopt` if none
/// came (the callback may still run later; it then does nothing).
/// Thread-safe as the backend.
inline std::optional<backend_reply>
call_and_wait(lease_backend& backend, backend_op op, const backend_request& req,
              timespan timeout = std::chrono::seconds{10}) {
  auto promise = std::make_shared<std::promise<backend_reply>>();
  auto future = promise->get_future();
  backend.call(
    op, req, [promise](backend_reply r) { promise->set_value(std::move(r)); });
  if (future.wait_for(timeout) != std::future_status::ready)
    return std::nullopt;
  return future.get();
}

} // namespace troupe::lease
