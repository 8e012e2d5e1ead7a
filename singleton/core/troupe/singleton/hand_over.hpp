#pragma once

#include <cstdint>
#include <string>
#include <variant>

/// @file
/// The messages that the singleton managers of one singleton type exchange
/// (Akka's ClusterSingletonManager protocol: HandOverToMe,
/// HandOverInProgress, HandOverDone, TakeOverFromMe). The sender is never
/// part of the message: the transport authenticates the sending node
/// (remoting.hpp), and the manager judges every message by that node.
///
/// Meaning (docs/design/singleton.md):
/// - `hand_over_to_me`: the new oldest asks an older node to stop its
///   instance (if it runs one) and confirm. Repeated every
///   `hand_over_retry_interval` until answered.
/// - `hand_over_in_progress`: the old oldest got the request and is stopping
///   its instance; the confirmation follows.
/// - `hand_over_done`: the sender runs no instance and never starts one
///   again (its instance terminated and its lease was released, or it is
///   leaving, exiting or down and never ran one). A permanent statement,
///   which is what lets a new oldest count it as cleared.
/// - `take_over_from_me`: the old oldest (it is exiting) tells the new
///   oldest to ask for the hand-over. Repeated every
///   `hand_over_retry_interval` for a bounded number of times.
///
/// All are idempotent: duplicates and late copies change nothing (scenario
/// S3). Wire format: CAF 0.17's inspect (no fields; the type is the
/// message).
namespace troupe::singleton {

struct hand_over_to_me {
  friend bool operator==(hand_over_to_me, hand_over_to_me) = default;
};

struct hand_over_in_progress {
  friend bool operator==(hand_over_in_progress, hand_over_in_progress)
    = default;
};

struct hand_over_done {
  friend bool operator==(hand_over_done, hand_over_done) = default;
};

struct take_over_from_me {
  friend bool operator==(take_over_from_me, take_over_from_me) = default;
};

template <class Inspector>
auto inspect(Inspector& f, hand_over_to_me& x) {
  static_cast<void>(x);
  return f();
}

template <class Inspector>
auto inspect(Inspector& f, hand_over_in_progress& x) {
  static_cast<void>(x);
  return f();
}

template <class Inspector>
auto inspect(Inspector& f, hand_over_done& x) {
  static_cast<void>(x);
  return f();
}

template <class Inspector>
auto inspect(Inspector& f, take_over_from_me& x) {
  static_cast<void>(x);
  return f();
}

/// Any manager-to-manager message.
using hand_over_message = std::variant<hand_over_to_me, hand_over_in_progress,
                                       hand_over_done, take_over_from_me>;

/// "hand_over_to_me", "hand_over_in_progress", "hand_over_done" or
/// "take_over_from_me".
const char* name_of(const hand_over_message& x) noexcept;

} // namespace troupe::singleton
