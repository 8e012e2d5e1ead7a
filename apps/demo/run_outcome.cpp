#include "run_outcome.hpp"

#include <fmt/format.h>

namespace troupe::demo {

run_end end_of_run(bool interrupted, bool setup_failed, bool completed) {
  if (interrupted)
    return run_end::interrupted;
  if (setup_failed || !completed)
    return run_end::setup_error;
  return run_end::judged;
}

int exit_code(run_end e, bool passed) {
  switch (e) {
    case run_end::judged:
      return passed ? 0 : 1;
    case run_end::setup_error:
      return 2;
    case run_end::interrupted:
      return 130;
  }
  return 2;
}

std::string interrupted_text(std::string_view phase, std::string_view dir) {
  return fmt::format("interrupted (SIGINT or SIGTERM) while {}: the run did "
                     "not end, so it is not judged (files: {})\n"
                     "INTERRUPTED\n",
                     phase, dir);
}

} // namespace troupe::demo
