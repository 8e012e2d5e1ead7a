#pragma once

#include <cstdint>
#include <optional>
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

} // namespace troupe::demo
