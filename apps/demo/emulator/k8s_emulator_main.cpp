// troupe-k8s-emulator: the Kubernetes Lease API emulator of test/support
// (troupe/test/k8s_api_emulator.hpp: coordination.k8s.io/v1 Leases with
// optimistic concurrency and bearer-token authentication) as a process, for
// `troupe-demo --lease kubernetes` on a machine without a cluster.
//
// Usage: troupe-k8s-emulator [--bind 127.0.0.1] [--port 0]
//                            [--token-file PATH]
// Plain HTTP; its first stdout line is `listening on HOST:PORT` (the chosen
// port when --port is 0). With --token-file, requests must carry
// `Authorization: Bearer <the file's first line>` (a request without one
// is system:anonymous: 403); without it, every request is the service
// account (as behind `kubectl proxy`). A node uses it with
//   --lease.backend=kubernetes
//   --lease.kubernetes.api_server=http://HOST:PORT
//   --lease.kubernetes.allow_insecure_http=true
//   --lease.kubernetes.token_file=PATH (or "" without --token-file)
//   --lease.kubernetes.namespace=default
// Every namespace exists. SIGTERM or SIGINT: stops and exits 0. Exit 2:
// bad flags, an unreadable or empty token file, a port it cannot bind.

#include <csignal>
#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "process/listen_cli.hpp"
#include "troupe/runtime/stop_signal.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

using namespace std::chrono_literals;
using namespace troupe;

namespace {

int fail(const std::string& why) {
  std::cerr << "troupe-k8s-emulator: " << why << '\n';
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"troupe-k8s-emulator: a Kubernetes Lease API "
               "(coordination.k8s.io/v1) emulator over plain HTTP",
               "troupe-k8s-emulator"};
  demo::process::listen_flags where;
  demo::process::add_listen_flags(app, where);
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "File whose first line is the accepted bearer token "
                 "(default: no authentication)");
  if (auto code
      = demo::process::parse_cli(app, argc, argv, "troupe-k8s-emulator"))
    return *code;
  test::k8s_api_emulator_options opts;
  opts.host = where.bind;
  opts.port = static_cast<uint16_t>(where.port);
  // Nobody reads the request history of a long demo run.
  opts.max_recorded_requests = 1000;
  opts.token.clear();
  if (!token_file.empty()) {
    std::ifstream in{token_file};
    if (!in || !std::getline(in, opts.token))
      return fail(fmt::format("--token-file {}: cannot read it", token_file));
    if (opts.token.empty())
      return fail(
        fmt::format("--token-file {}: the first line is empty", token_file));
  }
  std::signal(SIGPIPE, SIG_IGN);
  runtime::install_stop_signal_handlers();
  auto emulator = test::make_k8s_api_emulator(std::move(opts));
  if (!emulator)
    return fail(emulator.error().message);
  std::cout << demo::process::listening_line(where.bind, (*emulator)->port())
            << std::endl;
  while (!runtime::sleep_unless_stopped(1s))
    continue;
  auto counters = (*emulator)->counters();
  auto leases = (*emulator)->leases().size();
  emulator->reset();
  std::cerr << fmt::format("troupe-k8s-emulator: stopped ({} requests, {} "
                           "writes, {} leases)\n",
                           counters.requests, counters.writes, leases);
  return 0;
}
