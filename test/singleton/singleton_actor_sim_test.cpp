#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "sim_remoting.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/faulty_lease_backend.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/singleton/singleton.hpp"

// The singleton manager and proxy actors on CAF's deterministic coordinator
// and the simulated transport: cluster daemons, managers, proxies and
// leases (the in-memory backend) on simulated time.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using cluster::remote_ref;
using singleton::instance_context;
using singleton::manager_status;
using singleton::proxy_status;
using singleton::singleton_manager;
using singleton::singleton_proxy;

namespace {

const std::vector<unique_address> nodes{
  {"10.0.0.1", 2552, 11}, {"10.0.0.2", 2552, 22}, {"10.0.0.3", 2552, 33}};

const std::string lease_name = "test-singleton-jobs";

cluster::endpoint ep(const unique_address& x) {
  return cluster::endpoint_of(x);
}

/// What the instances did, in order: "start <host> <incarnation> <token>",
/// "recv <host> <incarnation> <symbol>", "exit <host> <incarnation>
/// holder=<lease holder at that moment>".
struct journal {
  std::vector<std::string> lines;

  size_t count(const std::string& prefix) const {
    return static_cast<size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
        return l.rfind(prefix, 0) == 0;
      }));
  }

  size_t index_of(const std::string& line) const {
    return static_cast<size_t>(std::find(lines.begin(), lines.end(), line)
                               - lines.begin());
  }

  /// Index of the first line starting with `prefix` (lines.size() if none).
  size_t first(const std::string& prefix) const {
    return static_cast<size_t>(std::find_if(lines.begin(), lines.end(),
                                            [&](const std::string& l) {
                                              return l.rfind(prefix, 0) == 0;
                                            })
                               - lines.begin());
  }

  bool has(const std::string& line) const {
    return index_of(line) < lines.size();
  }
};

lease::lease_settings lease_settings_for(const unique_address& owner) {
  lease::lease_settings s;
  s.name = lease_name;
  s.owner = to_string(owner);
  s.ttl = 15s;
  s.renewal_interval = 5s;
  s.safety_margin = 1500ms;
  s.operation_timeout = 2s;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 100ms;
  return s;
}

/// Nodes with a cluster daemon each, and optionally a manager and a proxy,
/// on one sim_remoting world; the lease store is shared.
class singleton_world {
public:
  singleton_world() = default;

  ~singleton_world() {
    for (auto& p : proxies_)
      p.stop();
    for (auto& m : managers_)
      caf::anon_send_exit(m.actor(), caf::exit_reason::user_shutdown);
    for (auto& h : clusters_)
      h.stop();
    w.det().run();
  }

  /// Starts the cluster daemon of `nodes[i]` (joining through nodes[0]).
  void start_node(size_t i) {
    auto remoting = w.start(nodes.at(i));
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.membership.seed_nodes = {ep(nodes.front())};
    s.config = test_join_config();
    s.on_shutdown = stops->hook();
    auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
    REQUIRE(h);
    clusters_.resize(std::max(clusters_.size(), i + 1));
    remotings_.resize(std::max(remotings_.size(), i + 1));
    clusters_[i] = *h;
    remotings_[i] = remoting;
  }

  /// Starts the first `n` nodes and waits until all are up.
  void start_cluster(size_t n) {
    for (size_t i = 0; i < n; ++i)
      start_node(i);
    w.advance(10s);
    REQUIRE(all_up(state(0), n));
  }

  /// Starts a leased manager on each of the first `n` nodes.
  std::vector<singleton_manager> start_leased_managers(size_t n) {
    std::vector<singleton_manager> ms;
    for (size_t i = 0; i < n; ++i)
      ms.push_back(start_leased_manager(i));
    return ms;
  }

  /// A lease of `nodes[i]` over the shared store.
  lease::lease_handle make_lease(const unique_address& owner) {
    auto h
      = lease::lease_handle::spawn(w.sys(), lease_settings_for(owner), backend);
    REQUIRE(h);
    w.det().track(h->actor());
    w.det().run();
    return *h;
  }

  /// The factory of a recording instance: answers each order with
  /// ack{qty, "<host>#<incarnation>"} to the sender's reply reference. With
  /// `stop_delay`, the stop message `stop_request` makes it wait that long
  /// before it quits.
  singleton::instance_factory factory(runtime::timespan stop_delay = 0s) {
    auto j = log;
    auto st = store;
    return [j, st, stop_delay](caf::event_based_actor* self,
                               const instance_context& ctx) -> caf::behavior {
      auto host = ctx.node.host;
      auto inc = std::to_string(ctx.incarnation);
      j->lines.push_back("start " + host + " " + inc + " "
                         + std::to_string(ctx.fencing_token));
      self->attach_functor([j, st, host, inc] {
        auto record = st->record(lease_name);
        j->lines.push_back("exit " + host + " " + inc + " holder="
                           + (record ? record->holder : std::string{}));
      });
      return {
        [j, host, inc, ctx](const remote_ref& from, const order& o) {
          j->lines.push_back("recv " + host + " " + inc + " " + o.symbol);
          if (from.is_addressable())
            ctx.remoting.tell(from, ack{o.qty, host + "#" + inc});
        },
        [self, stop_delay](stop_request_atom) {
          self->delayed_send(self, stop_delay, quit_atom::value);
        },
        [self](quit_atom) { self->quit(); },
      };
    };
  }

  using stop_request_atom = caf::atom_constant<caf::atom("stopreq")>;
  using quit_atom = caf::atom_constant<caf::atom("quitnow")>;

  /// Starts the manager of "jobs" on `nodes[i]`.
  singleton_manager start_manager(size_t i,
                                  singleton::manager_options opts = {},
                                  runtime::timespan stop_delay = 0s) {
    if (!opts.settings) {
      singleton::manager_settings s;
      s.lease_retry_interval = 1s;
      s.restart_min_backoff = 1s;
      opts.settings = s;
    }
    auto m
      = singleton_manager::start(w.sys(), clusters_.at(i), remotings_.at(i),
                                 "jobs", factory(stop_delay), std::move(opts));
    REQUIRE(m);
    managers_.push_back(*m);
    w.det().run();
    return *m;
  }

  /// Starts a manager with a lease of its own over the shared store.
  singleton_manager start_leased_manager(size_t i,
                                         runtime::timespan stop_delay = 0s) {
    singleton::manager_options opts;
    opts.lease = make_lease(nodes.at(i));
    if (stop_delay > 0s)
      opts.stop_message = caf::make_message(stop_request_atom::value);
    return start_manager(i, std::move(opts), stop_delay);
  }

  singleton_proxy start_proxy(size_t i) {
    singleton::proxy_options opts;
    opts.settings = singleton::proxy_settings{};
    auto p = singleton_proxy::start(w.sys(), clusters_.at(i), remotings_.at(i),
                                    "jobs", std::move(opts));
    REQUIRE(p);
    proxies_.push_back(*p);
    w.det().run();
    return *p;
  }

  template <class T, class Handle, class Atom>
  T ask(const Handle& h, Atom atom) {
    probe p{w.sys()};
    p.send(h, atom);
    w.det().run();
    auto got = p.poll<T>();
    REQUIRE(got);
    REQUIRE(*got);
    return **got;
  }

  manager_status status(const singleton_manager& m) {
    return ask<manager_status>(m.actor(), singleton::status_atom::value);
  }

  proxy_status status(const singleton_proxy& p) {
    return ask<proxy_status>(p.actor(), singleton::status_atom::value);
  }

  cluster::current_cluster_state state(size_t i) {
    return ask<cluster::current_cluster_state>(clusters_.at(i).actor(),
                                               cluster::state_atom::value);
  }

  const cluster_handle& cluster(size_t i) const {
    return clusters_.at(i);
  }

  const remoting_handle& w_remoting(size_t i) const {
    return remotings_.at(i);
  }

  /// Advances in steps of `step` until `pred` holds, at most `limit`.
  template <class Pred>
  bool advance_until(Pred pred, runtime::timespan limit,
                     runtime::timespan step = 100ms) {
    auto end = w.det().now() + limit;
    while (!pred() && w.det().now() < end)
      w.advance(step);
    return pred();
  }

  sim_remoting w{
    1, {}, {lease::add_lease_types, singleton::add_singleton_types}};
  std::shared_ptr<lease::in_memory_lease_store> store
    = std::make_shared<lease::in_memory_lease_store>(w.det().clock());
  std::shared_ptr<lease::faulty_lease_backend> backend
    = std::make_shared<lease::faulty_lease_backend>(
      std::make_shared<lease::in_memory_lease_backend>(store),
      w.det().scheduler());
  std::shared_ptr<journal> log = std::make_shared<journal>();
  std::shared_ptr<shutdown_log> stops = std::make_shared<shutdown_log>();

private:
  std::vector<cluster_handle> clusters_;
  std::vector<remoting_handle> remotings_;
  std::vector<singleton_manager> managers_;
  std::vector<singleton_proxy> proxies_;
};

std::string host(size_t i) {
  return nodes.at(i).host;
}

} // namespace

TEST_CASE("singleton manager (sim): without a lease the only node runs the "
          "instance at once, with token 0") {
  singleton_world x;
  x.start_node(0);
  auto m = x.start_manager(0);
  x.w.advance(3s);
  REQUIRE(x.log->has("start " + host(0) + " 1 0"));
  auto s = x.status(m);
  CHECK(s.state == "oldest");
  CHECK(s.incarnation == 1);
  CHECK(s.fencing_token == 0);
}

TEST_CASE("singleton manager (sim): lease held by another owner blocks the "
          "instance until it is released, then it starts with a greater "
          "token") {
  singleton_world x;
  auto other = x.make_lease({"10.9.9.9", 2552, 99});
  probe p{x.w.sys()};
  p.send(other.actor(), lease::acquire_atom::value, runtime::timespan{5s});
  x.w.det().run();
  auto got = p.poll<lease::acquire_result>();
  REQUIRE(got);
  REQUIRE(*got);
  REQUIRE((*got)->acquired);
  auto first_token = (*got)->token;
  x.start_node(0);
  auto m = x.start_leased_manager(0);
  x.w.advance(10s);
  CHECK(x.log->lines.empty());
  CHECK(x.status(m).state == "acquiring_lease");
  // The other owner lets go: the manager asks again within
  // lease_retry_interval (1s) and starts the instance.
  p.send(other.actor(), lease::release_atom::value);
  x.w.det().run();
  REQUIRE(x.advance_until([&] { return !x.log->lines.empty(); }, 3s));
  auto s = x.status(m);
  CHECK(s.state == "oldest");
  CHECK(s.fencing_token > first_token);
  CHECK(x.log->lines.front()
        == "start " + host(0) + " 1 " + std::to_string(s.fencing_token));
  CHECK(x.store->record(lease_name)->holder == to_string(nodes[0]));
}

TEST_CASE("singleton manager (sim): a lost lease stops the instance, then "
          "the manager acquires again and restarts it with a greater token") {
  singleton_world x;
  x.start_node(0);
  auto m = x.start_leased_manager(0);
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 1; }, 5s));
  auto token1 = x.status(m).fencing_token;
  CHECK(token1 > 0);
  // Deleted behind the holder's back: its next renewal finds it gone.
  x.store->clear_holder(lease_name);
  REQUIRE(x.advance_until([&] { return x.log->count("exit") == 1; }, 10s));
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 2; }, 10s));
  auto s = x.status(m);
  CHECK(s.state == "oldest");
  CHECK(s.incarnation == 2);
  CHECK(s.fencing_token > token1);
  CHECK(s.counters.leases_lost == 1);
  CHECK(x.log->index_of("exit " + host(0) + " 1 holder=") < x.log->index_of(
          "start " + host(0) + " 2 " + std::to_string(s.fencing_token)));
}

TEST_CASE("singleton manager (sim): a graceful stop waits for the instance "
          "to terminate and releases the lease only after it did") {
  singleton_world x;
  x.start_node(0);
  auto m = x.start_leased_manager(0, 5s);
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 1; }, 5s));
  probe p{x.w.sys()};
  p.send(m.actor(), singleton::stop_atom::value);
  x.w.advance(4s);
  // The instance takes 5s to stop: nothing is released or answered yet.
  CHECK(x.log->count("exit") == 0);
  CHECK(x.store->record(lease_name)->holder == to_string(nodes[0]));
  CHECK(!p.poll<bool>());
  x.w.advance(2s);
  auto done = p.poll<bool>();
  REQUIRE(done);
  REQUIRE(*done);
  CHECK(**done);
  // At the instance's exit the lease was still held; now it is free.
  CHECK(x.log->has("exit " + host(0) + " 1 holder=" + to_string(nodes[0])));
  CHECK(x.store->record(lease_name)->holder.empty());
}

TEST_CASE("singleton (sim): the oldest of three runs the instance and a "
          "proxy on another node delivers what it buffered before") {
  singleton_world x;
  x.start_cluster(3);
  auto proxy = x.start_proxy(2);
  auto [rec, got] = x.w.spawn_recorder();
  // Sent before any manager runs: buffered.
  caf::anon_send(proxy.actor(), order{"early", 1, {}});
  caf::send_as(rec, proxy.actor(), order{"with-reply", 2, {}});
  x.w.det().run();
  CHECK(x.status(proxy).buffered == 2);
  std::vector<singleton_manager> ms;
  for (size_t i = 0; i < 3; ++i)
    ms.push_back(x.start_manager(i));
  REQUIRE(x.advance_until([&] { return x.log->count("recv") == 2; }, 5s));
  CHECK(x.log->count("start") == 1);
  CHECK(x.log->lines.front() == "start " + host(0) + " 1 0");
  CHECK(x.log->has("recv " + host(0) + " 1 early"));
  CHECK(x.log->index_of("recv " + host(0) + " 1 early")
        < x.log->index_of("recv " + host(0) + " 1 with-reply"));
  CHECK(x.status(ms[0]).state == "oldest");
  CHECK(x.status(ms[1]).state == "younger");
  CHECK(x.status(ms[2]).state == "younger");
  // The instance answered the sender through its reply reference.
  x.w.advance(1s);
  REQUIRE(got->ack_count() == 1);
  CHECK(got->acks.front().second.who == host(0) + "#1");
  auto ps = x.status(proxy);
  REQUIRE(ps.target.is_addressable());
  CHECK(ps.target.node == nodes[0]);
  CHECK(ps.buffered == 0);
  CHECK(ps.dropped == 0);
}

TEST_CASE("singleton (sim): scenario S5: the instance stops after a lease "
          "loss and restarts on the same node, and the proxies identify it "
          "again and deliver") {
  singleton_world x;
  x.start_cluster(3);
  auto ms = x.start_leased_managers(3);
  auto pb = x.start_proxy(1);
  auto pc = x.start_proxy(2);
  pb.tell(order{"b1", 1, {}});
  pc.tell(order{"c1", 1, {}});
  REQUIRE(x.advance_until([&] { return x.log->count("recv") == 2; }, 5s));
  auto token1 = x.status(ms[0]).fencing_token;
  auto asked_b = x.status(pb).identifications;
  auto asked_c = x.status(pc).identifications;
  // The lease record is deleted: A stops its instance, acquires again and
  // restarts it on the same node.
  x.store->clear_holder(lease_name);
  REQUIRE(x.advance_until([&] { return x.log->count("exit") == 1; }, 10s));
  auto stopped_at = x.w.det().now();
  pb.tell(order{"b2", 2, {}});
  pc.tell(order{"c2", 2, {}});
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 2; }, 10s));
  auto s = x.status(ms[0]);
  CHECK(s.incarnation == 2);
  CHECK(s.fencing_token > token1);
  // Both proxies found the restarted instance within a second of its start
  // (identification_interval) and delivered what they buffered meanwhile.
  REQUIRE(x.advance_until(
    [&] {
      return x.log->has("recv " + host(0) + " 2 b2")
             && x.log->has("recv " + host(0) + " 2 c2");
    },
    1500ms));
  CHECK(x.w.det().now() - stopped_at < 5s);
  // S5's root cause: Akka.NET's proxy asked again only when the oldest
  // changed. Here the oldest stayed, and each proxy asked again because the
  // instance's watch fired.
  CHECK(x.status(pb).identifications > asked_b);
  CHECK(x.status(pc).identifications > asked_c);
  pb.tell(order{"b3", 3, {}});
  x.w.advance(1s);
  CHECK(x.log->has("recv " + host(0) + " 2 b3"));
  CHECK(x.log->count("start") == 2);
  for (auto* p : {&pb, &pc}) {
    auto ps = x.status(*p);
    REQUIRE(ps.target.is_addressable());
    CHECK(ps.target.node == nodes[0]);
    CHECK(ps.dropped == 0);
  }
}

TEST_CASE("singleton (sim): the oldest leaves gracefully: its instance "
          "stops, its lease is released, and the next oldest takes over") {
  singleton_world x;
  x.start_cluster(3);
  auto ms = x.start_leased_managers(3);
  auto pc = x.start_proxy(2);
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 1; }, 5s));
  x.cluster(0).leave(nodes[0]);
  REQUIRE(x.advance_until(
    [&] { return x.log->count("start " + host(1) + " ") == 1; }, 20s));
  // The old instance ended while A still held the lease; B started after.
  CHECK(x.log->index_of("exit " + host(0) + " 1 holder=" + to_string(nodes[0]))
        < x.log->first("start " + host(1) + " 1 "));
  CHECK(x.log->count("start") == 2);
  CHECK(x.status(ms[1]).state == "oldest");
  CHECK(x.store->record(lease_name)->holder == to_string(nodes[1]));
  // A was removed after the hand-over (its exit hold let go).
  REQUIRE(x.advance_until([&] { return x.stops->count() == 1; }, 10s));
  CHECK(status_in(x.state(1), nodes[0]).empty());
  pc.tell(order{"after", 1, {}});
  REQUIRE(x.advance_until(
    [&] { return x.log->has("recv " + host(1) + " 1 after"); }, 3s));
}

TEST_CASE("singleton (sim): scenario S6: a downed holder stops its instance "
          "and releases its lease, so the new oldest acquires at once, not "
          "after the ttl") {
  singleton_world x;
  x.start_cluster(2);
  auto ms = x.start_leased_managers(2);
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 1; }, 5s));
  auto downed_at = x.w.det().now();
  x.cluster(1).down(nodes[0]);
  REQUIRE(x.advance_until(
    [&] { return x.log->count("start " + host(1) + " ") == 1; }, 20s));
  // Well within the lease's ttl (15s): A released, B did not wait it out.
  CHECK(x.w.det().now() - downed_at < 5s);
  CHECK(x.log->index_of("exit " + host(0) + " 1 holder=" + to_string(nodes[0]))
        < x.log->first("start " + host(1) + " 1 "));
  CHECK(x.store->record(lease_name)->holder == to_string(nodes[1]));
  CHECK(x.status(ms[0]).state == "end");
  CHECK(x.stops->count() == 1);
}

TEST_CASE("singleton proxy (sim): a full buffer drops the oldest messages, "
          "counts them and warns once for the first") {
  singleton_world x;
  auto logs = std::make_shared<runtime::capture_sink>();
  runtime::add_log_sink(logs);
  x.start_node(0);
  x.w.advance(3s);
  singleton::proxy_options opts;
  opts.settings = singleton::proxy_settings{};
  opts.settings->buffer_size = 2;
  auto p = singleton_proxy::start(x.w.sys(), x.cluster(0), x.w_remoting(0),
                                  "jobs", std::move(opts));
  REQUIRE(p);
  for (int i = 1; i <= 5; ++i)
    p->tell(order{"m" + std::to_string(i), i, {}});
  x.w.advance(3s);
  auto ps = x.status(*p);
  CHECK(ps.buffered == 2);
  CHECK(ps.dropped == 3);
  CHECK(ps.identifications >= 2); // asked, and asked again (no manager)
  CHECK(logs->count("dropped 1 message(s)") == 1);
  CHECK(logs->count("dropped 2 message(s)") == 0);
  // A manager starts: the two newest arrive, in order.
  x.start_manager(0);
  REQUIRE(x.advance_until([&] { return x.log->count("recv") == 2; }, 3s));
  CHECK(x.log->index_of("recv " + host(0) + " 1 m4")
        < x.log->index_of("recv " + host(0) + " 1 m5"));
  p->stop();
  runtime::remove_log_sink(logs);
}

TEST_CASE("singleton manager (sim): an invalid type name or a second manager "
          "of the same type on a node is refused") {
  singleton_world x;
  x.start_node(0);
  singleton::manager_options opts;
  opts.settings = singleton::manager_settings{};
  auto bad = singleton_manager::start(x.w.sys(), x.cluster(0), x.w_remoting(0),
                                      "no spaces", x.factory(), opts);
  REQUIRE(!bad);
  CHECK(bad.error().message.find("no spaces") != std::string::npos);
  x.start_manager(0);
  auto twice = singleton_manager::start(
    x.w.sys(), x.cluster(0), x.w_remoting(0), "jobs", x.factory(), opts);
  REQUIRE(!twice);
  CHECK(twice.error().message.find("troupe.singleton.jobs.manager")
        != std::string::npos);
  opts.settings->use_lease = true;
  auto no_lease = singleton_manager::start(
    x.w.sys(), x.cluster(0), x.w_remoting(0), "other", x.factory(), opts);
  REQUIRE(!no_lease);
  CHECK(no_lease.error().message.find("use_lease") != std::string::npos);
}

TEST_CASE("singleton (sim): a stop message the instance does not handle "
          "neither ends the manager nor holds the leave forever: the "
          "instance is killed after instance_stop_timeout, the lease "
          "released and the next oldest takes over") {
  singleton_world x;
  x.start_cluster(2);
  std::vector<singleton_manager> ms;
  for (size_t i = 0; i < 2; ++i) {
    singleton::manager_options opts;
    opts.lease = x.make_lease(nodes.at(i));
    // Nobody handles a string: the instance never reacts to it.
    opts.stop_message = caf::make_message(std::string{"please stop"});
    ms.push_back(x.start_manager(i, std::move(opts)));
  }
  REQUIRE(x.advance_until([&] { return x.log->count("start") == 1; }, 5s));
  auto left_at = x.w.det().now();
  x.cluster(0).leave(nodes[0]);
  // The default instance_stop_timeout is 10s; the hand-over itself takes
  // about a second.
  REQUIRE(x.advance_until(
    [&] { return x.log->count("start " + host(1) + " ") == 1; }, 30s));
  CHECK(x.w.det().now() - left_at >= 10s);
  CHECK(x.w.det().now() - left_at < 15s);
  // Killed while A still held the lease; B started after.
  CHECK(x.log->index_of("exit " + host(0) + " 1 holder=" + to_string(nodes[0]))
        < x.log->first("start " + host(1) + " 1 "));
  CHECK(x.store->record(lease_name)->holder == to_string(nodes[1]));
  // A's manager handed over (it did not die of the instance's
  // unexpected_message answer) and ended; A's exit hold was let go: it was
  // removed.
  auto a = x.status(ms[0]);
  CHECK(a.state == "end");
  CHECK(a.counters.handed_over == 1);
  REQUIRE(x.advance_until([&] { return x.stops->count() == 1; }, 10s));
}

namespace {

/// A type no node registered (inspectable, never added to the actor
/// system's types: remoting cannot serialize it).
struct unregistered_payload {
  int value = 0;
};

template <class Inspector>
auto inspect(Inspector& f, unregistered_payload& x) {
  return f(x.value);
}

} // namespace

TEST_CASE("singleton proxy (sim): a message of a type nobody registered is "
          "refused with a WARNING naming it, an error value sent through "
          "the proxy does not end the proxy, and later messages arrive") {
  singleton_world x;
  auto logs = std::make_shared<runtime::capture_sink>();
  runtime::add_log_sink(logs);
  x.start_cluster(2);
  x.start_manager(0);
  x.start_manager(1);
  auto proxy = x.start_proxy(1);
  proxy.tell(order{"first", 1, {}});
  REQUIRE(x.advance_until([&] { return x.log->count("recv") == 1; }, 5s));
  proxy.tell(unregistered_payload{42});
  proxy.tell(caf::make_error(caf::sec::runtime_error, "application data"));
  x.w.advance(1s);
  INFO(logs->dump());
  CHECK(logs->count("cannot send to") >= 1);
  proxy.tell(order{"after", 2, {}});
  REQUIRE(x.advance_until(
    [&] { return x.log->has("recv " + host(0) + " 1 after"); }, 3s));
  runtime::remove_log_sink(logs);
}

TEST_CASE("singleton manager (sim): a factory that throws or returns an empty "
          "behavior ends only its instance: each is restarted after the "
          "backoff, with a WARNING, and the manager keeps running") {
  auto logs = std::make_shared<runtime::capture_sink>();
  runtime::add_log_sink(logs);
  auto run = [&](singleton::instance_factory f) {
    singleton_world x;
    x.start_node(0);
    singleton::manager_options opts;
    singleton::manager_settings s;
    s.restart_min_backoff = 1s;
    s.restart_max_backoff = 4s;
    opts.settings = s;
    auto m = singleton_manager::start(x.w.sys(), x.cluster(0), x.w_remoting(0),
                                      "jobs", std::move(f), opts);
    REQUIRE(m);
    x.w.advance(20s);
    auto st = x.status(*m);
    CHECK(st.state == "oldest");
    // 1s, 2s, 4s, 4s, ...: at least four restarts in 20s.
    CHECK(st.counters.started >= 5);
    CHECK(st.counters.terminated + 1 >= st.counters.started);
    caf::anon_send_exit(m->actor(), caf::exit_reason::user_shutdown);
  };
  SECTION("throws") {
    run([](caf::event_based_actor*, const instance_context&) -> caf::behavior {
      throw std::runtime_error("factory boom");
    });
  }
  SECTION("empty behavior") {
    run([](caf::event_based_actor*, const instance_context&) -> caf::behavior {
      return {};
    });
  }
  INFO(logs->dump());
  CHECK(logs->count("stopped by itself") >= 4);
  runtime::remove_log_sink(logs);
}

TEST_CASE("singleton manager (sim): a second singleton type on the lease "
          "of another on the same node is refused at start, naming both "
          "(it was refused the lease by its own node forever)") {
  singleton_world x;
  x.start_node(0);
  auto start = [&](const std::string& type) {
    singleton::manager_options opts;
    opts.lease = x.make_lease(nodes[0]); // lease_name: the same for both
    opts.settings = singleton::manager_settings{};
    return singleton_manager::start(x.w.sys(), x.cluster(0), x.w_remoting(0),
                                    type, x.factory(), std::move(opts));
  };
  auto jobs = start("jobs");
  REQUIRE(jobs);
  auto mail = start("mail");
  REQUIRE_FALSE(mail);
  CHECK(mail.error().message
        == "singleton mail: the lease " + lease_name
             + " is already used by the singleton jobs on this node; every "
               "singleton type needs a lease of its own (leave "
               "singleton.lease_name empty for "
               "<cluster.name>-singleton-<type>)");
  // Once jobs' manager is gone, the lease is free for another type.
  caf::anon_send_exit(jobs->actor(), caf::exit_reason::user_shutdown);
  x.w.advance(1s);
  auto again = start("mail");
  REQUIRE(again);
  caf::anon_send_exit(again->actor(), caf::exit_reason::user_shutdown);
  x.w.advance(1s);
}
