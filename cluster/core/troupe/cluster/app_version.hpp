#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The version of the application a node runs (`cluster.app_version`, as
/// Akka's `akka.cluster.app-version` and `akka.util.Version`). Every member
/// record carries it (member.hpp), so every member knows every member's
/// version; singleton placement (membership_state.hpp, `singleton_target`)
/// and shard allocation (sharding's least_shard_allocation) prefer the
/// members with the highest version, so that during a rolling update work
/// moves once, to the new nodes.
///
/// Shapes: one to three numbers separated by '.', e.g. "1", "1.2",
/// "1.2.3" (missing numbers are 0: "1.2" equals "1.2.0"), optionally
/// followed by a qualifier after '-', e.g. "1.2.3-RC1". Numbers are decimal,
/// 0 to 4294967295; a qualifier is letters, digits, '.', '-' and '_'.
///
/// Order (as Akka's Version): the numbers, segment by segment and
/// numerically ("1.10" > "1.9"); for equal numbers a release is newer than
/// any of its qualified pre-releases ("1.2.3" > "1.2.3-RC1"), and
/// qualifiers compare bytewise ("1.2.3-RC2" > "1.2.3-RC10", a known limit).
/// Differences from Akka: a single alphanumeric segment ("abc"), more than
/// three numbers, and sbt-dynver's "+" suffix are refused with a message
/// instead of being taken as text (a rolling update must never depend on a
/// comparison that is not the one the operator meant); Akka's compareTo
/// lets the qualifier's string comparison overrule "a release is newer
/// than its pre-release", troupe does not.
///
/// A plain value; thread-safe as any value.

namespace troupe::cluster {

/// A parsed application version; the default value is "0.0.0" (Akka's
/// `Version.Zero`, the default of `cluster.app_version`).
struct app_version {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t patch = 0;
  /// Empty for a release; e.g. "RC1".
  std::string qualifier;

  friend bool operator==(const app_version&, const app_version&) = default;
  friend std::strong_ordering operator<=>(const app_version& x,
                                          const app_version& y) noexcept;
};

/// Parses `text` (see the file comment). Errors (errc::invalid_settings)
/// quote the text and say what is wrong, e.g. `"1.x" is not a version:
/// "x" is not a number (expected one to three numbers separated by '.',
/// e.g. "1.2.3", optionally followed by a qualifier after '-', e.g.
/// "1.2.3-RC1")`.
runtime::expected<app_version> parse_app_version(std::string_view text);

/// The canonical form, three numbers and the qualifier: "1.2.0",
/// "1.2.3-RC1".
std::string to_string(const app_version& x);

/// CAF-free inspection (STYLE.md §4): travels in the member record.
template <class Inspector>
auto inspect(Inspector& f, app_version& x) {
  return f(x.major, x.minor, x.patch, x.qualifier);
}

} // namespace troupe::cluster
