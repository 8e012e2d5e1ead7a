// hello_lease: the smallest complete lease program (the README shows it).
//
//   build/apps/hello_lease/hello-lease --lease.file.directory=/tmp/leases
//
// Acquires the lease "jobs" from configuration (file backend by default),
// does "work" while check_alive() holds, passing the fencing token along,
// and releases the lease when the node shuts down (Ctrl-C).

#include <cstdio>

#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/runtime/stop_signal.hpp"

using namespace troupe;

int main(int argc, char** argv) {
  runtime::install_stop_signal_handlers();
  runtime::node_options opts;
  opts.modules = {lease::lease_module()};
  opts.sources = runtime::sources_from_process(argc, argv, nullptr);
  auto node = runtime::node::start(std::move(opts));
  if (!node) { // every bad key and value, named
    std::fprintf(stderr, "%s\n", node.error().message.c_str());
    return 2;
  }
  // Backend from lease.backend, settings from the other lease.* keys.
  auto lease = lease::lease_handle::spawn_from_config(
    **node, "jobs", "hello-" + std::to_string(::getpid()));
  if (!lease) { // e.g. an unusable directory or invalid settings, named
    std::fprintf(stderr, "%s\n", runtime::error_message(lease.error()).c_str());
    return 2;
  }
  while (!runtime::stop_requested()) {
    auto acquired
      = lease->acquire(); // true, false (held by another) or an error
    if (!acquired) {
      std::fprintf(stderr, "%s\n",
                   runtime::error_message(acquired.error()).c_str());
    } else if (*acquired) {
      std::printf("holding \"jobs\" with fencing token %llu\n",
                  static_cast<unsigned long long>(lease->token()));
      std::fflush(stdout); // visible at once, also when piped or killed
      // Guarded work: re-check before every side effect, pass the token on.
      while (lease->check_alive() && !runtime::stop_requested())
        runtime::sleep_unless_stopped(std::chrono::milliseconds{200});
    }
    runtime::sleep_unless_stopped(std::chrono::seconds{1});
  }
  (*node)->shutdown(); // releases the lease and waits for the backend
}
