#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// troupe's configuration: a schema of declared keys, typed values, and the
/// layering default < file < environment < command line (DESIGN.md §10).
///
/// Keys are snake_case and hierarchical (`lease.ttl`). Environment variables
/// map as `TROUPE_` + key upper-cased with `.` -> `__`
/// (`TROUPE_LEASE__TTL`); lists are comma-separated there and on the command
/// line; flags are `--lease.ttl=5s`. Durations are strings with units
/// (`"20s"`, `"500ms"`), never bare integers.
///
/// An unknown key or a bad value is an error naming the key, the value and
/// where it came from. Secret values are stored as `secret` and render as
/// `<redacted>`.
///
/// This header is pure (no I/O): the TOML file and the process environment
/// are read by the edge (config_loader.hpp), which hands the core raw values.

namespace troupe::runtime {

/// The type of a declared key.
enum class config_type : uint8_t {
  string,
  integer,
  boolean,
  real,
  duration,
  string_list,
  secret,
};

/// "string", "integer", ...
std::string_view to_string(config_type x) noexcept;

/// A declared configuration key.
struct config_key {
  /// Dotted snake_case name, e.g. "lease.ttl".
  std::string name;
  config_type type = config_type::string;
  /// The default in the textual form a user would write ("15s", "3",
  /// "true", "a,b"). Parsed with the same rules as user input; must be valid.
  std::string default_value;
  /// One or two sentences for the reference documentation.
  std::string description;
  /// Inclusive bounds for integers.
  std::optional<int64_t> min_integer;
  std::optional<int64_t> max_integer;
  /// Inclusive lower bound for durations (e.g. "> 0" is min 1ns).
  std::optional<timespan> min_duration;
  /// For string keys: the allowed values (empty = any string).
  std::vector<std::string> allowed;
  /// For duration keys: the text "off" (or `false` in a file) is accepted
  /// and stored as a zero duration, which the key's owner reads as
  /// "disabled" (Akka's `off`). Such a key renders a zero as "off"; set
  /// `min_duration` so that "0s" is not a second way to write it.
  bool off_allowed = false;
  /// Checked at join (config_schema::check_on_join): the value must be
  /// equal on every node of a cluster.
  bool checked_on_join = false;
};

/// A key with the four fields every declaration sets; constraints
/// (bounds, allowed values) are set on the result.
config_key make_config_key(std::string name, config_type type,
                           std::string default_value, std::string description);

/// A typed configuration value.
using config_value = std::variant<std::string, int64_t, bool, double, timespan,
                                  std::vector<std::string>, secret>;

/// A raw value as a configuration file yields it, before the schema gives
/// it a type. Strings from the environment or the command line are always
/// `std::string` and parsed by the key's type.
using raw_config_value
  = std::variant<std::string, int64_t, bool, double, std::vector<std::string>>;

/// The set of keys every module declares. Not thread-safe while being
/// built; read-only afterwards.
class config_schema {
public:
  /// Declares a key. Declaring a name twice, or a default that does not
  /// parse, is a programmer error (asserts).
  void add(config_key key);

  /// The key named `name`, or nullptr.
  const config_key* find(std::string_view name) const;

  /// All keys, sorted by name.
  std::vector<const config_key*> keys() const;

  /// The declared key closest to `name` within an edit distance of 2
  /// (insertions, deletions, substitutions and swaps of neighbours), or
  /// nullptr. Ties go to the first key in name order. Used for "did you
  /// mean" hints.
  const config_key* closest(std::string_view name) const;

  /// Marks the declared key `name` as checked at join: a node sends its
  /// value (as `config::render` gives it) when it joins a cluster, and a
  /// node whose value differs from the cluster's is refused with a reason
  /// naming the key and both values; a node that does not declare the key
  /// (e.g. runs without the module) joins (Akka's JoinConfigCompatChecker
  /// for a module's own keys, e.g. `sharding.number_of_shards`;
  /// cluster/core join_config_checker.hpp, rule ignore_if_missing).
  /// Marking an undeclared key or a secret (its value would travel and be
  /// logged in clear text) is a programmer error (asserts).
  void check_on_join(std::string_view name);

private:
  std::map<std::string, config_key, std::less<>> keys_;
};

/// Declares in `schema` a key whose integer or duration value must not be
/// negative (the usual bound of a module's counts and intervals; rules
/// beyond it belong to the module's validator).
void add_non_negative_key(config_schema& schema, std::string name,
                          config_type type, std::string default_value,
                          std::string description);

/// Declares in `schema` an integer key bounded to [min, max] at parse time
/// (the error then names the source: flag, variable or file) and shown with
/// its bounds in the reference.
void add_integer_key(config_schema& schema, std::string name,
                     std::string default_value, std::string description,
                     int64_t min, int64_t max);

/// Declares in `schema` a duration key of at least `min` (checked at parse
/// time, like `add_integer_key`).
void add_duration_key(config_schema& schema, std::string name,
                      std::string default_value, std::string description,
                      timespan min);

/// Where a value came from: "default", "file /etc/troupe.toml",
/// "env TROUPE_LEASE__TTL", "flag --lease.ttl" or "set by code".
struct config_origin {
  std::string text = "default";
};

/// A complete, validated configuration: every declared key has a value.
/// Thread-safe for concurrent reads; `set` must not run concurrently with
/// anything else. Keeps a pointer to its schema, which must outlive it.
class config {
public:
  /// Builds the defaults of `schema`.
  explicit config(const config_schema& schema);

  /// The value of `key`. Asking for an undeclared key or the wrong type is
  /// a programmer error (asserts). T is one of the config_value types.
  template <class T>
  const T& get(std::string_view key) const {
    auto i = values_.find(key);
    TROUPE_ASSERT(i != values_.end());
    auto* ptr = std::get_if<T>(&i->second.value);
    TROUPE_ASSERT(ptr != nullptr);
    return *ptr;
  }

  /// Where the value of `key` came from.
  const config_origin& origin(std::string_view key) const;

  /// The value of `key` as text (durations as "20s", lists comma-separated,
  /// secrets as "<redacted>").
  std::string render(std::string_view key) const;

  /// Sets `key` from text, with the same parsing and errors as user input.
  /// `origin` names the source for error messages and `origin()`.
  error set(std::string_view key, std::string_view text, config_origin origin);

  /// As `set(key, std::string_view{text}, origin)`. Without these two
  /// overloads a `std::string` or a literal would convert equally well to
  /// `std::string_view` and to `raw_config_value` (ambiguous).
  error set(std::string_view key, const std::string& text,
            config_origin origin) {
    return set(key, std::string_view{text}, std::move(origin));
  }

  /// See above.
  error set(std::string_view key, const char* text, config_origin origin) {
    return set(key, std::string_view{text}, std::move(origin));
  }

  /// Sets `key` from a raw file value (type-checked against the schema).
  error set(std::string_view key, const raw_config_value& value,
            config_origin origin);

  /// The values of the keys marked with `config_schema::check_on_join`,
  /// rendered as `render` does, by key.
  std::map<std::string, std::string> join_checked_values() const;

  /// The schema this configuration was built from.
  const config_schema& schema() const noexcept {
    return *schema_;
  }

private:
  struct entry {
    config_value value;
    config_origin origin;
  };
  const config_schema* schema_;
  std::map<std::string, entry, std::less<>> values_;
};

/// The errc::unknown_config_key error for `key`, e.g. `unknown key
/// "lease.tll" (from env TROUPE_LEASE__TLL); did you mean lease.ttl?`. The
/// hint names `schema.closest(key)`, if any. Never shows a value (an unknown
/// key may hold a secret).
error unknown_key_error(const config_schema& schema, std::string_view key,
                        const config_origin& origin);

/// The errc::bad_config_value error for a value of `key`, e.g. `bad value
/// "5x" for lease.ttl (from env TROUPE_LEASE__TTL): unknown unit "x" (...)`.
/// `value` is shown as given (the caller quotes strings); it is left out
/// when `key` is a secret, so `reason` must never contain the value either.
error bad_value_error(const config_key& key, std::string_view value,
                      const config_origin& origin, std::string_view reason);

/// Parses a duration with a unit: "250us", "500ms", "20s", "5m", "1h";
/// fractions are allowed ("1.5s"). Bare numbers, negative values and unknown
/// units are errors that quote the text.
expected<timespan> parse_duration(std::string_view text);

/// Renders a duration in the largest unit that keeps it whole: "20s",
/// "500ms", "1500ms", "250us", "0s".
std::string render_duration(timespan d);

/// The environment variable of a key: "lease.ttl" -> "TROUPE_LEASE__TTL".
std::string env_name_of(std::string_view key);

/// The inputs of `load_config` besides the schema (gathered by the edge).
struct config_sources {
  /// Path of a TOML file, if any (from `--config=PATH` or TROUPE_CONFIG).
  std::optional<std::string> file;
  /// Environment variables (name, value); only TROUPE_* ones matter.
  std::vector<std::pair<std::string, std::string>> env;
  /// Command-line arguments of the form `--key=value`.
  std::vector<std::string> args;
};

/// The reference documentation of a schema as Markdown: one table row per
/// key with type, default, environment variable and description (a key
/// checked at join says so at the end of its description).
std::string render_markdown(const config_schema& schema);

} // namespace troupe::runtime
