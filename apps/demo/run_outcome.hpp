#pragma once

#include <string>
#include <string_view>

/// @file
/// How a demo run ends: judged, a setup error, or interrupted; the exit
/// code of each (demo_launcher.cpp's documented 0, 1, 2 and 130). Pure.

namespace troupe::demo {

/// The ways a run ends.
enum class run_end {
  /// It ran to its end: the verdict is computed (exit 0 or 1).
  judged,
  /// A process did not start or the cluster did not form: no verdict
  /// (exit 2).
  setup_error,
  /// SIGINT or SIGTERM: the run was cut short, so it is not judged (a
  /// partial history proves nothing either way; exit 130).
  interrupted,
};

/// The end of a run: interrupted wins (a setup step that failed because of
/// the interrupt is not a setup error); then a setup error or a run that
/// did not complete; else judged.
run_end end_of_run(bool interrupted, bool setup_failed, bool completed);

/// The exit code: judged 0 when `passed` else 1, setup_error 2,
/// interrupted 130.
int exit_code(run_end e, bool passed);

/// What an interrupted run prints instead of a verdict, e.g.
/// `interrupted (SIGINT or SIGTERM) while running under load: the run is
/// not judged (files: /tmp/x)` then `INTERRUPTED`; each line ends in a
/// newline.
std::string interrupted_text(std::string_view phase, std::string_view dir);

} // namespace troupe::demo
