#pragma once

#include <filesystem>

#include "chaos_history.hpp"

/// @file
/// The one edge of the checker: reading a run directory's files into a
/// `chaos_input` (layout: /work/chaos-spec.md, "Inputs of the checker").

namespace troupe::chaos {

/// Reads DIR/history/*.jsonl (by file name), DIR/nemesis.jsonl,
/// DIR/client.log, DIR/ledger.jsonl and DIR/journal.jsonl. A missing file
/// or history directory reads as empty (the checks then say what is
/// missing); other entries of DIR/history are skipped. Blocking file I/O;
/// does not throw on a missing or unreadable file (a file that cannot be
/// read is empty too). Safe to call from any thread.
chaos_input read_run_dir(const std::filesystem::path& dir);

} // namespace troupe::chaos
