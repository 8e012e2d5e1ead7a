#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

/// @file
/// The failover time as the store's files show it (the oracle's data,
/// DESIGN.md §10: never the nodes' own reports). Pure.

namespace troupe::demo {

/// The CLOCK_MONOTONIC time (ns) of the first record in `ledger_jsonl`
/// (the store's ledger.jsonl: one JSON object per line with `mono_ns`,
/// `token` and `accepted`) that was accepted with a token greater than
/// `victim_token` at or after `kill_ns`: the new singleton instance's
/// first fenced write. None if there is none. Lines that do not parse are
/// skipped.
std::optional<int64_t> first_takeover_ns(std::string_view ledger_jsonl,
                                         uint64_t victim_token,
                                         int64_t kill_ns);

/// The CLOCK_MONOTONIC time (ns) of the first `acked` line in `client_log`
/// (client.log, client/client_log.hpp) of a deposit first sent at or after
/// `kill_ns` to an account whose shard (sharding::default_shard_id with
/// `number_of_shards`) is one of `victim_shards`: the first deposit to an
/// account of the failed node that its new home persisted. (A deposit sent
/// before the failure does not count: its answer may have left the failed
/// node just before it.) An ack from `victim_api` (the failed node's app
/// API, `host:port`) does not count either: a partitioned node still
/// answers for its own shards until it downs itself. None if there is
/// none.
std::optional<int64_t> first_victim_ack_ns(
  std::string_view client_log, const std::set<std::string>& victim_shards,
  uint32_t number_of_shards, int64_t kill_ns, std::string_view victim_api);

} // namespace troupe::demo
