#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

/// @file
/// One style for the command-line errors of the demo's programs
/// (troupe-demo, troupe-demo-store, troupe-k8s-emulator): `PROGRAM: what
/// was wrong; see --help` on one line on stderr, exit 2; `--help` prints
/// the usage on stdout, exit 0. CLI11's own messages are put in troupe's
/// words (an unexpected argument, a flag without its value); the checks'
/// messages (`--nodes: "2" must be between 3 and 9`) name their flag.
/// Header-only; no CAF.

namespace troupe::demo::process {

/// A CLI11 check: a whole number from `lo` to `hi`, e.g. `"2" must be
/// between 3 and 9`, `"abc" is not a whole number` (CLI11 prefixes the
/// flag).
inline std::function<std::string(const std::string&)> whole_number_in(long lo,
                                                                      long hi) {
  return [lo, hi](const std::string& text) -> std::string {
    auto shown = text.substr(0, 32);
    if (text.empty()
        || text.find_first_not_of("0123456789") != std::string::npos)
      return fmt::format("\"{}\" is not a whole number", shown);
    if (text.size() > 9 || std::stol(text) < lo || std::stol(text) > hi)
      return fmt::format("\"{}\" must be between {} and {}", shown, lo, hi);
    return {};
  };
}

/// What was wrong, in troupe's words, from CLI11's error `e` (thrown by
/// `app.parse`; `app` still holds the arguments it did not expect).
inline std::string describe_cli_error(const CLI::App& app,
                                      const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // CLI11 lists them in reverse; remaining() has the command line's order.
    auto extra = app.remaining();
    return fmt::format("unexpected argument{}: {}",
                       extra.size() == 1 ? "" : "s", fmt::join(extra, " "));
  }
  std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--nodes: 1 required INT missing": the flag came without its value.
    if (auto colon = what.find(':');
        colon != std::string::npos
        && what.find("missing", colon) != std::string::npos)
      return what.substr(0, colon) + " needs a value";
  }
  return what;
}

/// The one line of a command-line error: `PROGRAM: WHAT; see --help`.
inline std::string usage_error_line(std::string_view program,
                                    std::string_view what) {
  return fmt::format("{}: {}; see --help", program, what);
}

/// Parses the command line. Nullopt when the program should go on;
/// otherwise its exit code: 0 after `--help` (usage on `out`), 2 after an
/// error (usage_error_line on `err`).
inline std::optional<int> parse_cli(CLI::App& app, int argc,
                                    const char* const* argv,
                                    std::string_view program, std::ostream& out,
                                    std::ostream& err) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << usage_error_line(program, describe_cli_error(app, e)) << '\n';
    return 2;
  }
}

} // namespace troupe::demo::process
