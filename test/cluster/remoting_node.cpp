// remoting_node: one process of the multi-process remoting test.
//
// Starts a troupe node with the cluster module (transport from the
// `cluster.*` flags, tied to the node's shutdown) and the test's message
// types, and publishes
//   "echo"  answers each order{qty} with ack{qty * 10, "<uid>"} to the
//           sender's reply-to reference; stops on (remote_ref, atom stop);
//   "svc"   does nothing but stops on (remote_ref, atom stop).
// Prints `ready <host:port#uid>` once published, then serves until
// SIGTERM/SIGINT (graceful: the node's shutdown stops remoting). Asks for
// SIGKILL when its parent dies.
//
// Usage: remoting_node [--cluster.key=value ...]   (node configuration)

#include <cstdio>
#include <string>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

#include <caf/event_based_actor.hpp>
#include <fmt/format.h>

#include "remoting_test_types.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/runtime/stop_signal.hpp"

using namespace troupe;
using cluster::remote_ref;

namespace {

void say(const std::string& text) {
  auto line = text + "\n";
  [[maybe_unused]] auto n = ::write(STDOUT_FILENO, line.data(), line.size());
}

caf::behavior echo(caf::event_based_actor* self,
                   cluster::remoting_handle remoting) {
  auto who = std::to_string(remoting.local_address().uid);
  return {
    [=](const remote_ref& from, const test::order& o) {
      if (from.is_addressable())
        remoting.tell(from, test::ack{o.qty * 10, who});
    },
    [=](const remote_ref&, caf::atom_value) { self->quit(); },
  };
}

caf::behavior svc(caf::event_based_actor* self) {
  return {
    [=](const remote_ref&, caf::atom_value) { self->quit(); },
  };
}

} // namespace

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  runtime::install_stop_signal_handlers();
  runtime::node_options opts;
  opts.modules = {cluster::cluster_module(),
                  runtime::module{"test", {}, test::add_test_types}};
  std::vector<std::string> args(argv + 1, argv + argc);
  opts.sources = runtime::sources_from_process(args, nullptr);
  auto node = runtime::node::start(std::move(opts));
  if (!node) {
    std::fprintf(stderr, "remoting_node: %s\n", node.error().message.c_str());
    return 1;
  }
  auto remoting = cluster::remoting_handle::start(**node);
  if (!remoting) {
    std::fprintf(stderr, "remoting_node: %s\n",
                 remoting.error().message.c_str());
    return 1;
  }
  auto& sys = (*node)->system();
  for (auto [name, actor] : {std::pair{"echo", sys.spawn(echo, *remoting)},
                             std::pair{"svc", sys.spawn(svc)}}) {
    if (auto ref = remoting->publish(name, actor); !ref) {
      std::fprintf(stderr, "remoting_node: %s\n", ref.error().message.c_str());
      return 1;
    }
    (*node)->stop_on_shutdown(caf::actor_cast<caf::strong_actor_ptr>(actor));
  }
  say(fmt::format("ready {}", runtime::to_string(remoting->local_address())));
  while (!runtime::stop_requested())
    runtime::sleep_unless_stopped(std::chrono::milliseconds{100});
  say("stopping");
  (*node)->shutdown();
  say("stopped");
  return 0;
}
