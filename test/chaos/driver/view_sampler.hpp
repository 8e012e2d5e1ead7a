#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nemesis_log.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "view_log.hpp"

/// @file
/// The chaos driver's membership sampler (docs/design/chaos.md, I4): in
/// rounds, it asks every node the driver knows to be running (and not
/// paused) for `GET /cluster/members`, all at once, and writes one
/// views.jsonl line per answer or error (view_log.hpp). It records; the
/// checker judges.

namespace troupe::chaos {

/// One process to ask in a round.
struct view_target {
  std::string node;
  uint64_t pid = 0;
  uint64_t start = 0;
  /// `http://host:port` of its management endpoint.
  std::string management_url;
};

/// Asks in rounds on an http_engine of its own (its io thread is started
/// by the constructor, in the calling thread's network namespace: make it
/// in the hub). The requests run concurrently with the driver; the driver's
/// main thread calls `start_round` and `poll`, which are not thread-safe
/// (one caller). The answers are stamped on arrival on the io thread.
class view_sampler {
public:
  /// Creates (truncates) `file`; errors as line_file's. Each request
  /// ends within `timeout`.
  view_sampler(const std::filesystem::path& file,
               std::chrono::milliseconds timeout);
  ~view_sampler();

  view_sampler(const view_sampler&) = delete;
  view_sampler& operator=(const view_sampler&) = delete;

  /// Starts a round asking `targets` (`final`: a round after the probe)
  /// and returns its number; none (0) while the previous round is out or
  /// when `targets` is empty.
  uint64_t start_round(const std::vector<view_target>& targets, bool final);

  /// Writes the previous round's lines once every answer of it is in;
  /// returns the number of the round written, 0 if none.
  uint64_t poll();

  /// True while a round is out.
  bool busy() const noexcept {
    return out_ != 0;
  }

private:
  struct round_state;

  line_file file_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<round_state> state_;
  uint64_t rounds_ = 0;
  // The round out, 0 if none.
  uint64_t out_ = 0;
  // Declared last: destroyed (shut down, its io thread joined) first,
  // while everything its callbacks touch still lives.
  runtime::http_engine engine_;
};

} // namespace troupe::chaos
