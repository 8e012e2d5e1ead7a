#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/lease/lease_record.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The record file format of the file lease backend (pure): a small,
/// versioned `key value` text, and the escaping of lease names and owners.

namespace troupe::lease {

/// The contents of one record file: the lease record plus the boot id of the
/// host boot that wrote it.
///
/// `record.expires_at` is a point on CLOCK_MONOTONIC, which restarts at boot:
/// a record whose `boot_id` differs from the current boot's is expired,
/// whatever its `expires_at` says (its `last_token` still counts).
struct lease_file_record {
  std::string boot_id;
  lease_record record;

  friend bool operator==(const lease_file_record&, const lease_file_record&)
    = default;
};

/// The version `encode_lease_file` writes and `decode_lease_file` accepts.
inline constexpr int lease_file_version = 1;

/// The largest record file `decode_lease_file` is asked to read, in bytes.
/// Real records stay below 1 KiB (the owner is at most 253 bytes, 759
/// escaped).
inline constexpr size_t max_lease_file_size = 4096;

/// The longest file name Linux file systems accept (NAME_MAX), in bytes.
inline constexpr size_t max_lease_file_name = 255;

/// Renders `x` as the record file text: one `key value` line per field in
/// this order, then a line `end`:
/// ```
/// version 1
/// boot_id 5d1c...
/// holder worker%20a
/// acquisition 1234
/// token 7
/// expires_at_ns 81234567890
/// last_token 7
/// end
/// ```
/// The holder and boot id are written with `escape_lease_text` (so a space,
/// a newline or a `%` in an owner name can never break the format); an empty
/// holder is a bare `holder` line. `expires_at_ns` is nanoseconds since the
/// CLOCK_MONOTONIC epoch. The `end` line lets the reader ignore stale bytes
/// after it (left behind if a writer died between its write and its
/// truncate). Pure.
std::string encode_lease_file(const lease_file_record& x);

/// Parses record file text written by `encode_lease_file`.
///
/// An empty text is a fresh record. (file_lease_backend decodes an empty
/// file only when the same call created it; an empty file that existed
/// before is rejected there, never passed here.) Anything else
/// must be exactly the lines above (each key once, in any order after
/// `version`, then `end`; bytes after `end` are ignored) with `token <=
/// last_token`. Errors: lease errc::backend_rejected with a message naming
/// the line, e.g. `line 5: token "7x" is not a number`, or `line 1:
/// unsupported version 2 (this build reads version 1)`. Pure.
runtime::expected<lease_file_record> decode_lease_file(std::string_view text);

/// Percent-encodes every byte outside `[A-Za-z0-9_.-]` (and a leading `.`)
/// as `%XX` (upper-case hex); the result has no spaces, slashes or control
/// characters. Injective. Pure.
std::string escape_lease_text(std::string_view text);

/// Inverse of `escape_lease_text`; nullopt for a malformed `%` sequence.
/// Pure.
std::optional<std::string> unescape_lease_text(std::string_view text);

/// The record file name of lease `name`: `escape_lease_text(name) +
/// ".lease"` (e.g. `jobs.lease`, `a%2Fb.lease`, `%2E%2E.lease`), never a
/// path component that leaves the directory. Pure.
std::string lease_file_name(std::string_view name);

} // namespace troupe::lease
