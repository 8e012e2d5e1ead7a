#pragma once

#include <chrono>
#include <thread>

/// @file
/// Polling with a deadline, for real-time tests (real sockets, processes):
/// the alternative to fixed sleeps. Unit tests never need it.

namespace troupe::test {

/// Calls `pred` every `every` (5 ms; longer for a costly `pred`, e.g. one
/// that parses a growing journal) until it returns true or `limit` (real
/// time, steady clock) has passed; returns its last value. Runs on the
/// calling thread. The one polling helper of every real-time test.
template <class Pred>
bool eventually(Pred pred,
                std::chrono::milliseconds limit = std::chrono::seconds{10},
                std::chrono::milliseconds every
                = std::chrono::milliseconds{5}) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until)
      return pred();
    std::this_thread::sleep_for(every);
  }
  return true;
}

} // namespace troupe::test
