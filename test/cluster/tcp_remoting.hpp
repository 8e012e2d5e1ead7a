#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "recording_listener.hpp"
#include "remoting_test_actors.hpp"
#include "tcp_fixture.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/runtime/caf_glue.hpp"

/// @file
/// Remoting nodes on real loopback sockets in one process: one actor system
/// and one tcp_transport per node.

namespace troupe::test {

/// Wraps tcp_transport::make as remoting's transport factory.
inline cluster::transport_factory
tcp_factory(cluster::tcp_transport_settings settings) {
  return [settings](std::shared_ptr<cluster::transport_listener> listener)
           -> runtime::expected<std::shared_ptr<cluster::transport>> {
    auto made = cluster::tcp_transport::make(settings, std::move(listener));
    if (!made)
      return made.error();
    return std::shared_ptr<cluster::transport>{std::move(*made)};
  };
}

/// One node: its own actor system (2 workers), remoting over TCP, and a
/// recorder published as "log".
class real_node {
public:
  struct config : caf::actor_system_config {
    explicit config(bool with_test_types) {
      runtime::add_runtime_types(*this);
      cluster::add_cluster_types(*this);
      if (with_test_types)
        add_test_types(*this);
      set("scheduler.max-threads", size_t{2});
      set("logger.file-verbosity", caf::atom("quiet"));
    }
  };

  /// `with_test_types` false: a node that does not know order and ack.
  explicit real_node(cluster::tcp_transport_settings settings = loopback(),
                     bool with_test_types = true)
    : cfg_(with_test_types), sys_(cfg_) {
    auto made = remoting_handle::start(sys_, tcp_factory(std::move(settings)));
    if (!made)
      FAIL(made.error().message);
    remoting = *made;
    rec = spawn(recorder, log);
    REQUIRE(remoting.publish("log", rec));
  }

  ~real_node() {
    remoting.stop();
    for (auto& a : actors_)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  real_node(const real_node&) = delete;
  real_node& operator=(const real_node&) = delete;

  template <class F, class... Ts>
  caf::actor spawn(F fn, Ts&&... xs) {
    auto a = sys_.spawn(fn, std::forward<Ts>(xs)...);
    actors_.push_back(a);
    return a;
  }

  const unique_address& addr() const {
    return remoting.local_address();
  }

  remote_ref ref(std::string name) const {
    return remoting.local_ref(std::move(name));
  }

  caf::actor_system& sys() {
    return sys_;
  }

private:
  config cfg_;
  caf::actor_system sys_;
  std::vector<caf::actor> actors_;

public:
  remoting_handle remoting;
  std::shared_ptr<recorded> log = std::make_shared<recorded>();
  caf::actor rec;
};

} // namespace troupe::test
