#include "demo_options.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "demo_io.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/file_kind.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace troupe::demo {

namespace {

// Throws a ValidationError naming the flags if nobody would be left to
// take over after the kills (and the freeze).
void check_counts(const options& o, bool kills_given) {
  if (o.kills >= o.nodes) {
    if (kills_given)
      throw CLI::ValidationError(
        "--kills", fmt::format("{} must be less than --nodes {}: somebody must "
                               "survive to take over",
                               o.kills, o.nodes));
    throw CLI::ValidationError(fmt::format(
      "--nodes {} leaves no survivor for the default --kills {}; use --kills "
      "{} or more nodes",
      o.nodes, o.kills, o.nodes - 1));
  }
  if (o.freeze && o.kills + 2 > o.nodes)
    throw CLI::ValidationError(
      "--freeze",
      fmt::format(
        "needs --nodes of at least --kills + 2 ({}{}): somebody "
        "must take over from the frozen holder{}",
        o.kills + 2,
        kills_given ? "" : fmt::format(" with the default --kills {}", o.kills),
        kills_given
          ? ""
          : fmt::format("; use --kills {} or more nodes", o.nodes - 2)));
}

} // namespace

std::optional<options> parse_flags(int argc, char** argv, int& exit_code) {
  CLI::App app{"troupe-demo: processes compete for a file lease; holders "
               "are killed; a fenced ledger checks the outcome"};
  options o;
  std::string ttl = "2s";
  // Before the range check, so "abc" is not reported as out of range.
  auto whole_number = [](const std::string& text) -> std::string {
    if (text.empty()
        || text.find_first_not_of("0123456789") != std::string::npos)
      return fmt::format("\"{}\" is not a whole number", text.substr(0, 32));
    return {};
  };
  app.add_option("--nodes", o.nodes, "Number of competing node processes")
    ->check(whole_number)
    ->check(CLI::Range(2, 20))
    ->capture_default_str();
  app.add_option("--ttl", ttl, "Lease ttl (500ms .. 60s)")
    ->capture_default_str()
    ->check([](const std::string& text) -> std::string {
      auto d = runtime::parse_duration(text);
      if (!d)
        return d.error().message;
      if (*d < 500ms || *d > 60s)
        return "must be between 500ms and 60s";
      return {};
    });
  auto* kills = app
                  .add_option("--kills", o.kills,
                              "How many times the holder is SIGKILLed")
                  ->check(whole_number)
                  ->check(CLI::Range(0, 19))
                  ->capture_default_str();
  app.add_flag("--freeze", o.freeze,
               "After the kills, freeze the holder (SIGSTOP) until another "
               "takes over, then resume it");
  app.add_flag("--quiet", o.quiet, "Print only the verdict");
  app.add_option("--dir", o.dir,
                 "Working directory (default: a fresh temp "
                 "directory)");
  app.add_option("--node-binary", o.node_binary,
                 "Path of troupe-demo-node (default: next to troupe-demo)");
  try {
    app.parse(argc, argv);
    check_counts(o, kills->count() > 0);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::cerr << "troupe-demo: " << e.what() << "\n\n" << app.help();
    exit_code = 2;
    return std::nullopt;
  }
  o.ttl = *runtime::parse_duration(ttl);
  return o;
}

bool complete(options& o) {
  if (o.node_binary.empty()) {
    std::error_code ec;
    auto self = fs::read_symlink("/proc/self/exe", ec);
    o.node_binary = (self.parent_path() / "troupe-demo-node").string();
  }
  struct stat st {};
  if (::stat(o.node_binary.c_str(), &st) != 0)
    return complain(
      fmt::format("--node-binary {}: {}", o.node_binary, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return complain(
      fmt::format("--node-binary {} is {}, not an executable file",
                  o.node_binary, runtime::file_kind(st.st_mode)));
  if (::access(o.node_binary.c_str(), X_OK) != 0)
    return complain(fmt::format("--node-binary {}: not executable: {}",
                                o.node_binary, std::strerror(errno)));
  if (o.dir.empty()) {
    auto tmpl = (fs::temp_directory_path() / "troupe-demo-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      return complain(fmt::format("cannot create a temp directory {}: {}", tmpl,
                                  std::strerror(errno)));
    o.dir = tmpl;
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec)
    return complain(fmt::format("--dir {}: {}", o.dir, ec.message()));
  if (!fs::is_directory(o.dir, ec))
    return complain(fmt::format("--dir {} is not a directory", o.dir));
  return true;
}

} // namespace troupe::demo
