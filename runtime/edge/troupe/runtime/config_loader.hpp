#pragma once

#include <string>
#include <utility>
#include <vector>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The edge of troupe's configuration: reads the TOML file, gathers the
/// process's TROUPE_* environment variables and `--key=value` arguments,
/// and layers them over the schema's defaults (DESIGN.md §10). The parsing
/// and checking of values is the core's (config.hpp).

namespace troupe::runtime {

/// Loads a configuration: the defaults of `schema`, then the TOML file, then
/// the environment, then the command line; a later layer overrides an
/// earlier one, and `config::origin` tells which one set a key.
///
/// - File: the last `--config=PATH` argument, else a non-empty TROUPE_CONFIG
///   in `sources.env`, else `sources.file`. Tables flatten into dotted keys
///   (`[lease] ttl = "5s"` is `lease.ttl`). Strings, integers, booleans,
///   floats and arrays of strings map to `raw_config_value`; dates and mixed
///   arrays are errors. A file that cannot be read or parsed is
///   errc::bad_config_file naming the path (and toml11's line and message).
/// - Environment: only names starting with `TROUPE_`; the rest maps back to
///   a key with `__` -> `.` and lower case (`TROUPE_LEASE__TTL` is
///   `lease.ttl`). TROUPE_CONFIG names the file and is not a key.
/// - Arguments: each must be `--key=value` (`--config=PATH` selects the
///   file); anything else is errc::bad_command_line naming the argument
///   (with the value redacted if the key is a secret).
///
/// Unknown keys are errc::unknown_config_key with a "did you mean" hint; bad
/// values are errc::bad_config_value naming key, value and origin. All
/// problems are collected: the result is then one error with the code of
/// the first problem and a message listing each problem on its own line
/// (after a first line "N configuration errors:" when there are several).
/// Secret values never appear in a message.
///
/// `schema` must outlive the returned config. Thread-safe (reads only its
/// arguments and the file).
expected<config> load_config(const config_schema& schema,
                             const config_sources& sources);

/// Builds sources from arguments and environment variables (pure): keeps
/// env variables whose name starts with `TROUPE_` and every argument up to
/// a bare `--` (positional arguments follow it); load_config reports any of
/// them that is not `--key=value`, so a mistyped flag is never silently
/// ignored. An application removes its own flags first. `file` is
/// set from TROUPE_CONFIG (if non-empty) and overridden by the last
/// `--config=PATH`; both also stay in `env`/`args`, where load_config
/// treats them the same way.
config_sources make_config_sources(
  const std::vector<std::string>& args,
  const std::vector<std::pair<std::string, std::string>>& env);

/// The sources of the running process: `argv[1..argc)` and `envp` (a
/// null-terminated `NAME=value` array as passed to `main`; nullptr means
/// the process's `environ`). See make_config_sources for what is kept; an
/// application filters its own flags out of argv before, or passes the
/// remaining arguments to the overload below.
config_sources sources_from_process(int argc, char** argv, char** envp);

/// As above, with the arguments already split off (no program name).
config_sources sources_from_process(const std::vector<std::string>& args,
                                    char** envp);

} // namespace troupe::runtime
