#include "demo_options.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "demo_io.hpp"
#include "process/cli_error.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/file_kind.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace troupe::demo {

namespace {

// Digits only (an etcd endpoint's port).
std::string whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return fmt::format("\"{}\" is not a whole number", text.substr(0, 32));
  return {};
}

std::string check_duration(const std::string& text) {
  auto d = runtime::parse_duration(text);
  if (!d)
    return d.error().message;
  if (*d < 3s || *d > 1h)
    return fmt::format("\"{}\" must be between 3s and 1h", text.substr(0, 32));
  return {};
}

// "etcd://HOST:PORT" -> "HOST:PORT"; empty when the text is not one.
std::string etcd_endpoint_of(const std::string& text) {
  constexpr std::string_view scheme = "etcd://";
  if (text.rfind(scheme, 0) != 0)
    return {};
  auto rest = text.substr(scheme.size());
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()
      || !whole_number(rest.substr(colon + 1)).empty()
      || rest.find('/') != std::string::npos
      || rest.find('@') != std::string::npos)
    return {};
  return rest;
}

std::string check_lease(const std::string& text) {
  if (text == "file" || text == "kubernetes" || !etcd_endpoint_of(text).empty())
    return {};
  return fmt::format("\"{}\" is not file, etcd://HOST:PORT (a host and a "
                     "port) or kubernetes",
                     text.substr(0, 64));
}

std::string check_failure(const std::string& text) {
  if (text == "kill" || text == "partition" || text == "none")
    return {};
  return fmt::format("\"{}\" is not kill, partition or none",
                     text.substr(0, 64));
}

// An executable regular file `name` in `dir`, or the reason it is not.
std::string check_binary(const fs::path& dir, const char* name) {
  auto path = dir / name;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return fmt::format("{}: {}", path.string(), std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fmt::format("{} is {}, not an executable file", path.string(),
                       runtime::file_kind(st.st_mode));
  if (::access(path.c_str(), X_OK) != 0)
    return fmt::format("{}: not executable: {}", path.string(),
                       std::strerror(errno));
  return {};
}

} // namespace

std::string to_string(const options& o, lease_kind k) {
  switch (k) {
    case lease_kind::file:
      return "file";
    case lease_kind::etcd:
      return "etcd://" + o.etcd_endpoint;
    case lease_kind::kubernetes:
      return "kubernetes";
  }
  return "?";
}

std::string to_string(failure_kind k) {
  switch (k) {
    case failure_kind::kill:
      return "kill";
    case failure_kind::partition:
      return "partition";
    case failure_kind::none:
      return "none";
  }
  return "?";
}

std::optional<options> parse_flags(int argc, const char* const* argv,
                                   int& exit_code, std::ostream& out,
                                   std::ostream& err) {
  CLI::App app{"troupe-demo: a cluster of troupe-demo-node processes on "
               "loopback with a lease-guarded singleton and sharded "
               "accounts under client load; kills the singleton's host and "
               "judges the outcome from the store's and the client's "
               "records",
               "troupe-demo"};
  options o;
  std::string duration = "10s";
  std::string lease = "file";
  std::string failure = "kill";
  app.add_option("--nodes", o.nodes, "Cluster nodes (3 to 9)")
    ->check(process::whole_number_in(3, 9))
    ->capture_default_str();
  app
    .add_option("--duration", duration,
                "How long to run before the failure and again after the "
                "failover (3s to 1h)")
    ->check(check_duration)
    ->capture_default_str();
  app
    .add_option("--lease", lease,
                "The lease backend: file (in DIR/leases), etcd://HOST:PORT "
                "(a running etcd) or kubernetes (a Lease API emulator the "
                "demo starts)")
    ->check(check_lease)
    ->capture_default_str();
  app
    .add_option("--failure", failure,
                "What happens to the singleton's host: kill (SIGKILL), "
                "partition (its cluster links blackholed both ways through "
                "the management API's /faults; it downs itself as the "
                "minority) or none")
    ->check(check_failure)
    ->capture_default_str();
  app.add_flag("--quiet", o.quiet, "Print only the verdict");
  app.add_option("--dir", o.dir,
                 "Working directory (default: a fresh temp directory)");
  app.add_option("--bin-dir", o.bin_dir,
                 "Where troupe-demo-node, troupe-demo-store and "
                 "troupe-k8s-emulator are (default: next to troupe-demo)");
  if (auto code
      = process::parse_cli(app, argc, argv, "troupe-demo", out, err)) {
    exit_code = *code;
    return std::nullopt;
  }
  o.duration = *runtime::parse_duration(duration);
  if (lease == "kubernetes")
    o.lease = lease_kind::kubernetes;
  else if (lease != "file") {
    o.lease = lease_kind::etcd;
    o.etcd_endpoint = etcd_endpoint_of(lease);
  }
  o.failure = failure == "partition" ? failure_kind::partition
              : failure == "none"    ? failure_kind::none
                                     : failure_kind::kill;
  return o;
}

bool complete(options& o) {
  if (o.bin_dir.empty()) {
    std::error_code ec;
    o.bin_dir = fs::read_symlink("/proc/self/exe", ec).parent_path().string();
  }
  std::vector<const char*> binaries{"troupe-demo-node", "troupe-demo-store"};
  if (o.lease == lease_kind::kubernetes)
    binaries.push_back("troupe-k8s-emulator");
  for (const char* name : binaries)
    if (auto why = check_binary(o.bin_dir, name); !why.empty())
      return complain(fmt::format("--bin-dir {}: {}", o.bin_dir, why));
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
