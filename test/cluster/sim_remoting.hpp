#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "remoting_test_actors.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/cluster/sim_transport.hpp"
#include "troupe/test/deterministic.hpp"

/// @file
/// Several remoting nodes on one deterministic CAF system and one simulated
/// network, with one clock for both (the test coordinator's and the
/// network's advance together).

namespace troupe::test {

class sim_remoting {
public:
  /// Module registrations besides the cluster's and the test types.
  using init_fns = std::vector<std::function<void(caf::actor_system_config&)>>;

  explicit sim_remoting(uint64_t seed = 1, cluster::sim_settings settings = {},
                        init_fns extra = {})
    : sys_(with_defaults(std::move(extra))), net_(seed, settings) {}

  ~sim_remoting() {
    for (auto& n : nodes_)
      n.stop();
    for (auto& a : actors_)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sys_.run();
  }

  /// Starts remoting for node `addr`.
  remoting_handle start(const unique_address& addr,
                        cluster::remoting_settings settings = {}) {
    auto made = remoting_handle::start(
      sys_.sys(),
      [&](std::shared_ptr<cluster::transport_listener> l)
        -> runtime::expected<std::shared_ptr<cluster::transport>> {
        auto& t = net_.start_node(addr, *l);
        listeners_.push_back(std::move(l)); // must outlive the network
        // The network owns its transports.
        return std::shared_ptr<cluster::transport>{&t,
                                                   [](cluster::transport*) {}};
      },
      settings);
    REQUIRE(made);
    nodes_.push_back(*made);
    sys_.run();
    return *made;
  }

  /// Spawns `fn(xs...)`, stopped when the fixture ends.
  template <class F, class... Ts>
  caf::actor spawn(F fn, Ts&&... xs) {
    auto a = sys_.sys().spawn(fn, std::forward<Ts>(xs)...);
    actors_.push_back(a);
    return a;
  }

  /// A recorder and its log.
  std::pair<caf::actor, std::shared_ptr<recorded>> spawn_recorder() {
    auto log = std::make_shared<recorded>();
    return {spawn(recorder, log), log};
  }

  /// Runs CAF jobs, network events and timers in time order until `t`.
  void run_until(runtime::timestamp t) {
    for (;;) {
      sys_.run();
      auto next = net_.next_event_time();
      if (auto timer = sys_.next_timer(); timer && (!next || *timer < *next))
        next = timer;
      if (!next || *next > t)
        break;
      if (*next > sys_.now())
        sys_.set_clock_only(*next);
      net_.advance_to(*next);
      while (sys_.next_timer() && *sys_.next_timer() <= sys_.now())
        sys_.sched().trigger_timeout();
    }
    if (t > sys_.now())
      sys_.set_clock_only(t);
    net_.advance_to(t);
    sys_.run();
  }

  void advance(runtime::timespan d) {
    run_until(sys_.now() + d);
  }

  caf::actor_system& sys() {
    return sys_.sys();
  }

  deterministic_system& det() {
    return sys_;
  }

  cluster::sim_network& net() {
    return net_;
  }

private:
  static init_fns with_defaults(init_fns extra) {
    extra.insert(extra.begin(), {cluster::add_cluster_types, add_test_types});
    return extra;
  }

  std::vector<std::shared_ptr<cluster::transport_listener>> listeners_;
  deterministic_system sys_;
  std::vector<remoting_handle> nodes_;
  std::vector<caf::actor> actors_;
  cluster::sim_network net_;
};

} // namespace troupe::test
