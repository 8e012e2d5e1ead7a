#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// The Kubernetes label selector (`?labelSelector=...`), as
/// k8s.io/apimachinery/pkg/labels/selector.go parses and matches it, for
/// the API emulator's pod list. Pure values.
///
/// Grammar: requirements separated by `,` (all must hold; an empty selector
/// selects everything), each one of
/// - `key` (the label exists), `!key` (it does not);
/// - `key = value`, `key == value` (exists and equals), `key != value`
///   (absent, or another value);
/// - `key in (v1, v2)` (exists, one of them), `key notin (v1, v2)` (absent,
///   or none of them); the set must not be empty;
/// - `key > n`, `key < n` (exists and is an integer greater / less than n).
/// Whitespace around tokens is ignored. A key is a qualified name (an
/// optional DNS subdomain prefix and `/`, then 1..63 characters of
/// alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric); a value
/// is empty or such a name part.
///
/// Error texts follow the Go parser's shapes (`found ',', expected:
/// identifier`, `invalid label key "A B": ...`), not its exact wording: the
/// emulator answers them inside a 400 BadRequest Status, as the apiserver
/// does for a selector it cannot parse.

namespace troupe::test {

/// One requirement of a selector.
struct k8s_label_requirement {
  enum class op { exists, not_exists, equals, not_equals, in, not_in, gt, lt };
  std::string key;
  op what = op::exists;
  std::vector<std::string> values;
};

/// A parsed selector: every requirement must hold.
struct k8s_label_selector {
  std::vector<k8s_label_requirement> requirements;

  /// True if `labels` satisfy every requirement.
  bool matches(const std::map<std::string, std::string>& labels) const;
};

/// Parses `text`. Errors (runtime errc::bad_config_value) say what was
/// found and what was expected, or which key or value is invalid.
runtime::expected<k8s_label_selector>
parse_k8s_label_selector(std::string_view text);

} // namespace troupe::test
