#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

/// @file
/// DIR/views.jsonl, the chaos driver's record of what each live node says
/// its membership view is (docs/design/chaos.md, I4): one JSON object per
/// `GET /cluster/members` the driver made, e.g.
///
///     {"mono_ns":N,"sent_ns":M,"round":7,"final":false,"node":"node-3",
///      "pid":4242,"start":2,"self":"10.77.0.3:2552#91",
///      "incarnation":"c1f2","members":[{"address":"10.77.0.1:2552#17",
///      "status":"up","reachable":true},...]}
///
/// or, when the node gave no view, the same first fields and
/// `"error":"GET http://...: timeout"`. `sent_ns` is when the driver sent
/// the request, `mono_ns` when the answer (or the error) came, both
/// CLOCK_MONOTONIC nanoseconds like every stamp of the run; the node's view
/// is one it held somewhere between them. `round` numbers the driver's
/// rounds (every live node asked at once); `final` marks the rounds after
/// the probe. `incarnation` is present only when the node's answer has
/// one. The driver only records what the nodes said; the checker judges
/// (chaos_views.hpp). Pure.

namespace troupe::chaos {

/// One member as a node's `GET /cluster/members` lists it.
struct view_member {
  /// `host:port#uid`.
  std::string address;
  /// "up", "joining", "down", ... (the management API's status names).
  std::string status;
  bool reachable = true;

  friend bool operator==(const view_member&, const view_member&) = default;
};

/// What a node's `GET /cluster/members` says of its view.
struct members_answer {
  /// The answering node's own unique address.
  std::string self;
  /// The cluster's incarnation, when the answer carries one (a string, or
  /// a number written in decimal).
  std::optional<std::string> incarnation;
  /// In the answer's order.
  std::vector<view_member> members;

  friend bool operator==(const members_answer&, const members_answer&)
    = default;
};

/// Reads a `GET /cluster/members` body (docs/design/management.md): `self`
/// (a string), `members` (an array of objects with string `address` and
/// `status` and a boolean `reachable`, which defaults to true) and the
/// optional `incarnation` (a string or an unsigned number; null or absent:
/// none). Other fields are ignored. Errors: a text naming what is wrong,
/// e.g. `members[2] has no string "status"`, `not JSON: ...`.
std::variant<members_answer, std::string>
parse_members_answer(std::string_view body);

/// One request of a round and its outcome.
struct view_sample {
  int64_t sent_ns = 0;
  int64_t mono_ns = 0;
  uint64_t round = 0;
  bool final = false;
  /// The node's name and the process the driver asked (its pid and start
  /// number: the history file `<node>.<start>.jsonl`).
  std::string node;
  uint64_t pid = 0;
  uint64_t start = 0;
  /// The view, or why there is none (HTTP error, status, body).
  std::optional<members_answer> view;
  std::string error;
};

/// The sample's line (with its newline).
std::string view_line(const view_sample& x);

} // namespace troupe::chaos
