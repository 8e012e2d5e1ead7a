#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "chaos_history.hpp"

/// @file
/// The one edge of the checker: reading a run directory's files into a
/// `chaos_input` (layout: /work/chaos-spec.md, "Inputs of the checker").

namespace troupe::chaos {

/// A run directory's files as read, and the inputs that could not be.
struct run_dir_contents {
  /// The files read (an input in `errors` reads as empty).
  chaos_input input;
  /// One line per input that is missing, not a regular file (not a
  /// directory for DIR and DIR/history) or unreadable, naming it, e.g.
  /// `DIR/client.log is missing (a run writes it; is DIR a run
  /// directory?)`, `DIR/history/node-1.1.jsonl is a FIFO, not a regular
  /// file`, `DIR/ledger.jsonl cannot be read: Permission denied`. Empty
  /// when every input was read. Paths are `printable`.
  std::vector<std::string> errors;
};

/// Reads DIR/history/*.jsonl (by file name), DIR/nemesis.jsonl,
/// DIR/client.log, DIR/ledger.jsonl, DIR/journal.jsonl and DIR/views.jsonl
/// (a run directory of a driver older than views.jsonl reads as one with a
/// missing file: judge it with the checker of its time); other entries of
/// DIR/history are skipped. A run writes every one of them (an empty file is
/// fine), so a missing one is an error. Each input's type is taken from
/// std::filesystem::status (which follows a symbolic link and opens
/// nothing) before it is opened, and it is opened non-blocking, so a FIFO
/// is reported and never waited on. Blocking file I/O; does not throw
/// (apart from std::bad_alloc). Safe to call from any thread.
run_dir_contents read_run_dir(const std::filesystem::path& dir);

} // namespace troupe::chaos
