#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

/// @file
/// The app API's requests waiting for their entity's answer (deposit_api).

namespace troupe::demo {

/// An entity's answer to one deposit: the HTTP status and JSON body.
struct entity_answer {
  uint64_t status = 0;
  std::string body;
};

/// Requests waiting for an answer, by request number. `open` and `await`
/// run on the server's workers, `fulfil` on the reply actor. An answer
/// that comes after its request gave up is dropped. Thread-safe.
class pending_answers {
public:
  /// A new request number and the future its answer arrives in.
  std::pair<uint64_t, std::future<entity_answer>> open() {
    auto request = ++next_;
    std::lock_guard guard{mtx_};
    return {request, waiting_[request].get_future()};
  }

  /// Waits up to `timeout` for the answer to `request`; none if it did not
  /// come (the request is then forgotten, and a late answer dropped).
  std::optional<entity_answer> await(uint64_t request,
                                     std::future<entity_answer>& answer,
                                     std::chrono::nanoseconds timeout) {
    if (answer.wait_for(timeout) != std::future_status::ready) {
      // Still waiting: give up. Fulfilled meanwhile: take it. (Looking at
      // the future after erasing its promise would find a broken promise,
      // and get() would throw.)
      std::lock_guard guard{mtx_};
      if (waiting_.erase(request) > 0)
        return std::nullopt;
    }
    return answer.get();
  }

  /// Forgets `request` (it was never sent).
  void forget(uint64_t request) {
    std::lock_guard guard{mtx_};
    waiting_.erase(request);
  }

  /// The answer to `request`; dropped if the request gave up already.
  void fulfil(uint64_t request, entity_answer a) {
    std::lock_guard guard{mtx_};
    auto i = waiting_.find(request);
    if (i == waiting_.end())
      return;
    i->second.set_value(std::move(a));
    waiting_.erase(i);
  }

  /// Requests still waiting.
  size_t size() const {
    std::lock_guard guard{mtx_};
    return waiting_.size();
  }

private:
  mutable std::mutex mtx_;
  std::unordered_map<uint64_t, std::promise<entity_answer>> waiting_;
  std::atomic<uint64_t> next_{0};
};

} // namespace troupe::demo
