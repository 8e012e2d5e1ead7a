// Unit tests of the command-line errors of the demo's programs
// (process/cli_error.hpp): one line, `PROGRAM: what was wrong; see --help`,
// exit 2; CLI11's own messages put in troupe's words.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "process/cli_error.hpp"

using namespace troupe::demo;

TEST_CASE("cli errors: one line, PROGRAM: what was wrong, then see --help, "
          "exit 2") {
  auto [args, code, expected]
    = GENERATE(table<std::vector<std::string>, int, std::string>({
      {{"--nodes", "2"},
       2,
       "prog: --nodes: \"2\" must be between 3 and 9; see "
       "--help\n"},
      {{"--nodes", "abc"},
       2,
       "prog: --nodes: \"abc\" is not a whole number; "
       "see --help\n"},
      {{"--nodes", "99999999999"},
       2,
       "prog: --nodes: \"99999999999\" must be "
       "between 3 and 9; see --help\n"},
      {{"--nodes"}, 2, "prog: --nodes needs a value; see --help\n"},
      {{"--dir", "d", "--kills", "2"},
       2,
       "prog: unexpected arguments: --kills 2; see "
       "--help\n"},
      {{"--dir", "d", "extra"},
       2,
       "prog: unexpected argument: extra; see --help\n"},
      {{"--mode", "x"}, 2, "prog: --mode: x not in {a,b}; see --help\n"},
      {{}, 2, "prog: --dir is required; see --help\n"},
      {{"--dir", "d", "--nodes", "4"}, -1, ""},
    }));
  CAPTURE(args);
  CLI::App app{"test"};
  int nodes = 3;
  std::string mode = "a";
  std::string dir;
  app.add_option("--nodes", nodes)->check(process::whole_number_in(3, 9));
  app.add_option("--mode", mode)->check(CLI::IsMember({"a", "b"}));
  app.add_option("--dir", dir)->required();
  std::vector<const char*> argv{"prog"};
  for (auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream out;
  std::ostringstream err;
  auto got = process::parse_cli(app, static_cast<int>(argv.size()), argv.data(),
                                "prog", out, err);
  CHECK(got.value_or(-1) == code);
  CHECK(err.str() == expected);
  CHECK(out.str().empty());
}

TEST_CASE("cli errors: --help prints the usage on stdout, exit 0") {
  CLI::App app{"test"};
  std::vector<const char*> argv{"prog", "--help"};
  std::ostringstream out;
  std::ostringstream err;
  CHECK(process::parse_cli(app, 2, argv.data(), "prog", out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("--help"));
  CHECK(err.str().empty());
}
