// One chaos check's outcome (chaos_check_result.hpp).

#include "chaos_check_result.hpp"

#include <fmt/format.h>

namespace troupe::chaos {

void check_builder::fail(std::string problem, std::optional<event_ref> at) {
  result_.check.ok = false;
  if (++result_.violations <= demo::verdict::max_problems)
    result_.check.problems.push_back(std::move(problem));
  if (at)
    result_.offenses.push_back(std::move(*at));
}

check_result check_builder::finish(std::string summary) && {
  auto extra = result_.violations > demo::verdict::max_problems
                 ? result_.violations - demo::verdict::max_problems
                 : 0;
  if (extra > 0)
    result_.check.problems.push_back(fmt::format("... and {} more", extra));
  result_.check.summary = std::move(summary);
  return std::move(result_);
}

} // namespace troupe::chaos
