#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "merge_world.hpp"

// The membership engine with another cluster of its name: incarnations are
// founded and adopted, gossip of another incarnation is never merged (a
// detection instead), the probe finds the other cluster, the older side
// judges, the loser marks its gossip, refuses joins and stops for the
// merge, and its restarted members join the winner.

using namespace merge_test;

namespace {

template <class T>
std::vector<const T*> sent(const membership_effects& fx) {
  std::vector<const T*> out;
  for (auto& s : fx.send)
    if (auto* m = std::get_if<T>(&s.message))
      out.push_back(m);
  return out;
}

// Two clusters formed apart: {x1, x2, x3} (founded first: the older) and
// {y1, y2} (younger), each with its own seeds, cut off from each other.
merge_world two_clusters(size_t xs = 3, size_t ys = 2) {
  merge_world w;
  std::vector<std::string> x, y;
  for (size_t i = 1; i <= xs; ++i)
    x.push_back("x" + std::to_string(i));
  for (size_t i = 1; i <= ys; ++i)
    y.push_back("y" + std::to_string(i));
  w.partition(x, y);
  for (auto& h : x)
    w.start(h, {"x1"});
  REQUIRE(w.run_until([&] { return w.all_up(x); }));
  w.step(); // y is founded at least one step (100 ms) later
  for (auto& h : y)
    w.start(h, {"y1"});
  REQUIRE(w.run_until([&] { return w.all_up(y); }));
  return w;
}

} // namespace

TEST_CASE("merge engine: founding creates an incarnation, a welcomed node "
          "adopts it") {
  merge_world w;
  w.start("x1", {"x1"});
  w.start("x2", {"x1"});
  REQUIRE(w.run_until([&] { return w.all_up({"x1", "x2"}); }));
  auto inc = w.engine("x1").incarnation();
  CHECK(inc.is_set());
  // Founded when x1 joined itself (its wall clock then).
  CHECK(inc.founded_at >= at(0ms).wall);
  CHECK(inc.founded_at <= at(1s).wall);
  CHECK(w.engine("x2").incarnation() == inc);
  // Another founding (another engine seed) is another incarnation.
  w.start("z1", {"z1"});
  REQUIRE(w.run_until([&] { return w.engine("z1").is_member(); }));
  CHECK(w.engine("z1").incarnation().is_set());
  CHECK(w.engine("z1").incarnation() != inc);
}

TEST_CASE("merge engine: a gossip of another incarnation is dropped, "
          "reported once, and answered with a probe") {
  auto w = two_clusters();
  auto& x1 = *w.nodes.at("x1").engine;
  auto& y1 = *w.nodes.at("y1").engine;
  auto before = x1.state().latest_gossip();
  auto foreign = y1.state().latest_gossip();
  auto y = w.nodes.at("y1").self;
  auto fx = w.nodes.at("x1").engine->receive(
    y, membership_message{gossip_envelope{y, x1.self(), foreign}}, at(w.t));
  CHECK(x1.state().latest_gossip() == before);
  REQUIRE(fx.errors.size() == 1);
  CHECK_THAT(fx.errors[0], Catch::Contains(to_string(x1.incarnation())));
  CHECK_THAT(fx.errors[0], Catch::Contains(to_string(y1.incarnation())));
  CHECK_THAT(fx.errors[0], Catch::Contains("(2 members)"));
  REQUIRE(fx.met_foreign.size() == 1);
  CHECK(fx.met_foreign[0] == y1.incarnation());
  REQUIRE(sent<incarnation_probe>(fx).size() == 1);
  CHECK(fx.send[0].to == y);
  REQUIRE(x1.foreign_clusters().count(y1.incarnation()) == 1);
  auto& rec = x1.foreign_clusters().at(y1.incarnation());
  CHECK(rec.size == 2u);
  CHECK(rec.seen_via == y);
  // A status of that incarnation: dropped too, but already reported.
  auto again = w.nodes.at("x1").engine->receive(
    y,
    membership_message{gossip_status{y, foreign.version(), foreign.seen_by(),
                                     foreign.incarnation()}},
    at(w.t));
  CHECK(again.errors.empty());
  CHECK(again.met_foreign.empty());
  CHECK(x1.state().latest_gossip() == before);
}

TEST_CASE("merge engine: members probe the contact endpoints outside their "
          "view, every incarnation_probe_interval") {
  auto w = two_clusters();
  auto& n = w.nodes.at("x2");
  // The seed x1 is a member: not probed.
  auto quiet = n.engine->tick(at(w.t + 5s));
  CHECK(sent<incarnation_probe>(quiet).empty());
  n.engine->set_contact_endpoints(
    {merge_world::ep("y1"), merge_world::ep("x3"), merge_world::ep("y2")},
    at(w.t + 5s));
  auto fx = n.engine->tick(at(w.t + 5s));
  std::vector<endpoint> to;
  for (auto& s : fx.send)
    if (std::holds_alternative<incarnation_probe>(s.message)) {
      CHECK(s.to.uid == 0);
      to.push_back(endpoint_of(s.to));
    }
  CHECK(to
        == std::vector<endpoint>{merge_world::ep("y1"), merge_world::ep("y2")});
  auto& probe = *sent<incarnation_probe>(fx).front();
  CHECK(probe.info.incarnation == n.engine->incarnation());
  CHECK(probe.info.size == 3);
  CHECK_FALSE(probe.verdict.is_set());
  // Not again before the interval (2 s) has passed, then again.
  CHECK(sent<incarnation_probe>(n.engine->tick(at(w.t + 6s))).empty());
  CHECK(sent<incarnation_probe>(n.engine->tick(at(w.t + 7s))).size() == 2);
  // Off: never.
  auto s = short_settings();
  s.incarnation_probe_interval.reset();
  merge_world quiet_world;
  auto& q = quiet_world.start("q1", {"q1"}, s);
  q.engine->set_contact_endpoints(
    {merge_world::ep("y1"), merge_world::ep("y2")}, at(0ms));
  REQUIRE(quiet_world.run_until([&] { return q.engine->is_member(); }));
  for (auto t = 0ms; t < 20s; t += 500ms)
    CHECK(sent<incarnation_probe>(q.engine->tick(at(t))).empty());
}

TEST_CASE("merge engine: a member answers a probe with its cluster (the "
          "judge with its verdict), a node that is not a member does not") {
  auto w = two_clusters();
  auto& x1 = w.nodes.at("x1");
  auto& y1 = w.nodes.at("y1");
  incarnation_probe probe{y1.self, {y1.engine->incarnation(), 2, {}}, {}};
  auto fx = x1.engine->receive(y1.self, membership_message{probe}, at(w.t));
  auto answers = sent<incarnation_probe_answer>(fx);
  REQUIRE(answers.size() == 1);
  CHECK(fx.send.back().to == y1.self);
  CHECK(answers[0]->info.incarnation == x1.engine->incarnation());
  CHECK(answers[0]->info.size == 3);
  // x is older and larger: it judges that y leaves, and says so.
  CHECK(answers[0]->verdict == x1.engine->incarnation());
  CHECK_FALSE(x1.engine->merging_into().is_set());
  // A probe from its own cluster is answered plainly.
  auto& x2 = w.nodes.at("x2");
  incarnation_probe own{x2.self, {x2.engine->incarnation(), 3, {}}, {}};
  auto plain = x1.engine->receive(x2.self, membership_message{own}, at(w.t));
  REQUIRE(sent<incarnation_probe_answer>(plain).size() == 1);
  CHECK_FALSE(sent<incarnation_probe_answer>(plain)[0]->verdict.is_set());
  CHECK(plain.errors.empty());
  // Not a member (its seeds never answer): silent.
  auto& n = w.start("n1", {"nowhere1", "nowhere2"});
  REQUIRE_FALSE(n.engine->is_member());
  auto none = n.engine->receive(y1.self, membership_message{probe}, at(w.t));
  CHECK(sent<incarnation_probe_answer>(none).empty());
}

TEST_CASE("merge engine: {x1,x2,x3} (older) meets {y1,y2}: y obeys the "
          "verdict, refuses joins while it lingers, and every member of y "
          "stops for the merge, x goes on") {
  auto w = two_clusters();
  auto x_inc = w.engine("x1").incarnation();
  auto y_inc = w.engine("y1").incarnation();
  w.cut.clear();
  auto& y1 = w.nodes.at("y1");
  // y1 asks x1 (its contact); x1's answer carries the verdict.
  auto fx = y1.engine->receive(w.nodes.at("x1").self,
                               membership_message{incarnation_probe_answer{
                                 w.nodes.at("x1").self, {x_inc, 3, {}}, x_inc}},
                               at(w.t));
  CHECK(y1.engine->merging_into() == x_inc);
  REQUIRE(fx.errors.size() == 2); // the detection, then the decision
  CHECK_THAT(fx.errors[1], Catch::Contains("leaves to join the cluster of "
                                           "incarnation "
                                           + to_string(x_inc)));
  CHECK_THAT(fx.errors[1], Catch::Contains("cluster_merge"));
  // The mark goes to y2 at once.
  bool told_y2 = false;
  for (auto& s : fx.send)
    if (auto* env = std::get_if<gossip_envelope>(&s.message))
      told_y2 = told_y2
                || (s.to == w.nodes.at("y2").self
                    && env->gossip.merging_into() == x_inc);
  CHECK(told_y2);
  CHECK_FALSE(fx.shutdown); // y2 has not seen it yet: y1 lingers
  // While marked, y1 nacks init_join and ignores a join.
  const unique_address r{"r", 2552, 9};
  auto nack = y1.engine->receive(
    r, membership_message{init_join{r, join_config{}}}, at(w.t));
  CHECK(sent<init_join_nack>(nack).size() == 1);
  CHECK(sent<init_join_ack>(nack).empty());
  auto join_fx
    = y1.engine->receive(r, membership_message{join{r, {}, {}}}, at(w.t));
  CHECK(sent<welcome_gossip>(join_fx).empty());
  CHECK_FALSE(y1.engine->state().latest_gossip().has_member(r));
  w.take(y1, std::move(fx));
  REQUIRE(w.run_until(
    [&] { return w.nodes.at("y1").stopped && w.nodes.at("y2").stopped; }));
  for (auto h : {"y1", "y2"}) {
    INFO(h);
    CHECK(w.nodes.at(h).stopped->reason == self_stop_reason::merging);
    CHECK_THAT(w.nodes.at(h).stopped->text, Catch::Contains(to_string(x_inc)));
  }
  for (auto h : {"x1", "x2", "x3"}) {
    INFO(h);
    CHECK_FALSE(w.nodes.at(h).stopped);
    CHECK_FALSE(w.engine(h).merging_into().is_set());
  }
  (void)y_inc;
}

TEST_CASE("merge engine: the merge through probes alone, then the stopped "
          "members restart and join the winner: one cluster") {
  auto sizes = GENERATE(table<size_t, size_t, bool>({
    // x older; x size, y size, does x win?
    {3, 2, true},
    {2, 3, false},
    {2, 2, true}, // equal: the younger (y) leaves
    {1, 1, true},
  }));
  auto [xs, ys, x_wins] = sizes;
  INFO("x " << xs << " members (older), y " << ys);
  auto w = two_clusters(xs, ys);
  auto x_inc = w.engine("x1").incarnation();
  auto y_inc = w.engine("y1").incarnation();
  REQUIRE(is_older(x_inc, y_inc));
  w.cut.clear();
  // Only y knows the other side's endpoints: x is met through y's probes.
  std::vector<std::string> all;
  for (auto& [host, n] : w.nodes)
    all.push_back(host);
  for (auto& [host, n] : w.nodes)
    if (host[0] == 'y')
      n.engine->set_contact_endpoints({merge_world::ep("x1")}, at(w.t));
  auto loser = x_wins ? 'y' : 'x';
  auto losers_stopped = [&] {
    for (auto& [host, n] : w.nodes)
      if (host[0] == loser && !n.stopped)
        return false;
    return true;
  };
  REQUIRE(w.run_until(losers_stopped, 20s));
  for (auto& [host, n] : w.nodes) {
    INFO(host);
    if (host[0] == loser)
      CHECK(n.stopped->reason == self_stop_reason::merging);
    else
      CHECK_FALSE(n.stopped);
  }
  // Both sides of each meeting detected it: every y node (each probed x1),
  // and x1 (probed by them), whichever side left.
  for (auto& [host, n] : w.nodes) {
    INFO(host);
    if (host[0] == 'y')
      CHECK(n.engine->foreign_clusters().count(x_inc) == 1);
    else if (host == "x1")
      CHECK(n.engine->foreign_clusters().count(y_inc) == 1);
  }
  // Restarted (new uid) with every node as a seed, as a supervisor would.
  std::vector<std::string> seeds{all};
  for (auto& host : all)
    if (host[0] == loser)
      w.start(host, seeds);
  REQUIRE(w.run_until([&] { return w.all_up(all); }, 30s));
  for (auto& host : all)
    CHECK(w.engine(host).incarnation() == (x_wins ? x_inc : y_inc));
}

TEST_CASE("merge engine: a verdict that does not come from the older side "
          "is ignored") {
  auto w = two_clusters();
  auto& x1 = w.nodes.at("x1");
  auto& y1 = w.nodes.at("y1");
  auto y_inc = y1.engine->incarnation();
  // y (the younger) claims x must leave and join y.
  incarnation_probe forged{y1.self, {y_inc, 5, {}}, y_inc};
  auto fx = x1.engine->receive(y1.self, membership_message{forged}, at(w.t));
  CHECK_FALSE(x1.engine->merging_into().is_set());
  CHECK(std::any_of(fx.info.begin(), fx.info.end(), [](auto& line) {
    return line.find("ignored a merge verdict") != std::string::npos;
  }));
  // A verdict naming a third incarnation, even from the older side, too.
  auto x_inc = x1.engine->incarnation();
  cluster_incarnation third{42, x_inc.founded_at};
  incarnation_probe odd{x1.self, {x_inc, 3, {}}, third};
  y1.engine->receive(x1.self, membership_message{odd}, at(w.t));
  CHECK_FALSE(y1.engine->merging_into().is_set());
}

TEST_CASE("merge engine: a welcome into a merging cluster is ignored (the "
          "join goes on)") {
  auto w = two_clusters();
  auto& n = w.start("j1", {"y1", "x1"});
  auto g = w.engine("x1").state().latest_gossip();
  g.add(member::joining(n.self, {}, {}));
  g.mark_merging_into(w.engine("y1").incarnation());
  auto x = w.nodes.at("x1").self;
  auto fx
    = n.engine->receive(x, membership_message{welcome_gossip{x, g}}, at(w.t));
  CHECK_FALSE(n.engine->is_member());
  CHECK(std::any_of(fx.info.begin(), fx.info.end(), [](auto& line) {
    return line.find("ignored the welcome") != std::string::npos;
  }));
}

TEST_CASE("merge engine: a handshake's report is a detection and a probe, "
          "a foreign cluster not seen again is forgotten") {
  auto w = two_clusters();
  auto& x1 = w.nodes.at("x1");
  auto y = w.nodes.at("y1").self;
  auto y_inc = w.engine("y1").incarnation();
  auto fx = x1.engine->foreign_incarnation_met(y, y_inc, at(w.t));
  REQUIRE(fx.errors.size() == 1);
  CHECK_THAT(fx.errors[0], Catch::Contains("size unknown"));
  REQUIRE(sent<incarnation_probe>(fx).size() == 1);
  CHECK(fx.send[0].to == y);
  REQUIRE(x1.engine->foreign_clusters().count(y_inc) == 1);
  CHECK_FALSE(x1.engine->foreign_clusters().at(y_inc).size);
  // Its own incarnation, or none: nothing.
  CHECK(x1.engine->foreign_incarnation_met(y, x1.engine->incarnation(), at(w.t))
          .empty());
  CHECK(x1.engine->foreign_incarnation_met(y, {}, at(w.t)).empty());
  // 3 x the probe interval (2 s) later it is forgotten.
  auto later = x1.engine->tick(at(w.t + 5900ms));
  CHECK(x1.engine->foreign_clusters().count(y_inc) == 1);
  auto gone = x1.engine->tick(at(w.t + 6s));
  CHECK(x1.engine->foreign_clusters().empty());
  CHECK(std::any_of(gone.info.begin(), gone.info.end(), [](auto& line) {
    return line.find("no longer sees") != std::string::npos;
  }));
  (void)later;
}

TEST_CASE("merge engine: with the planted bug the loser decides but never "
          "leaves") {
  merge_world w;
  w.bug = planted_bug::loser_never_leaves;
  w.partition({"x1"}, {"y1"});
  w.start("x1", {"x1"});
  REQUIRE(w.run_until([&] { return w.all_up({"x1"}); }));
  w.step();
  w.start("y1", {"y1"});
  REQUIRE(w.run_until([&] { return w.all_up({"y1"}); }));
  w.cut.clear();
  w.nodes.at("y1").engine->set_contact_endpoints({merge_world::ep("x1")},
                                                 at(w.t));
  w.run_until([] { return false; }, 10s);
  CHECK_FALSE(w.nodes.at("y1").stopped);
  CHECK_FALSE(w.engine("y1").merging_into().is_set());
  CHECK(w.engine("y1").foreign_clusters().size() == 1);
}
