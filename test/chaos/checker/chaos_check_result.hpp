#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chaos_history.hpp"
#include "verdict/verdict_core.hpp"

/// @file
/// One chaos check's outcome as the checks build it: the demo verdict's
/// `check` (name, PASS/FAIL, summary, the first problems named) plus how
/// many violations were found and where the located ones stand (for the
/// timeline). Pure.

namespace troupe::chaos {

/// A check with its violations counted and located.
struct check_result {
  demo::verdict::check check;
  /// Every violation found (the check lists the first
  /// demo::verdict::max_problems of them).
  size_t violations = 0;
  /// The offending event of each violation that names one, in the order
  /// found.
  std::vector<event_ref> offenses;
};

/// Collects one check's violations.
class check_builder {
public:
  explicit check_builder(std::string name) {
    result_.check.name = std::move(name);
  }

  /// Adds a violation: `problem` names the offending line (`<file> line N:
  /// ...`), `at` is that event when there is one.
  void fail(std::string problem, std::optional<event_ref> at = std::nullopt);

  bool ok() const noexcept {
    return result_.violations == 0;
  }

  size_t violations() const noexcept {
    return result_.violations;
  }

  /// The result, with `summary` as its one line (the caller words it for
  /// the pass or the failure); closes the problem list with `... and N
  /// more` as the demo verdict does.
  check_result finish(std::string summary) &&;

private:
  check_result result_;
};

} // namespace troupe::chaos
