#include "manager_fixture.hpp"

// Singleton placement by app_version (cluster.app_version): the instance
// runs on the singleton target, the oldest member of the highest
// app_version; during a rolling update it moves once, to the first new
// member that is up, by a graceful hand-over; and the choice depends on the
// view alone (scenario S4's hazard).

using namespace singleton_test;

namespace {

// Instances started per node so far.
std::map<char, uint64_t> starts(manager_world& w) {
  std::map<char, uint64_t> out;
  for (auto& [self, n] : w.nodes)
    out[self] = n.engine.counters().started;
  return out;
}

bool claims_target(const managed_node& n) {
  auto s = n.engine.state();
  return s == manager_state::becoming_oldest || s == manager_state::taking_over
         || s == manager_state::acquiring_lease || s == manager_state::oldest;
}

} // namespace

TEST_CASE("manager: during a rolling update the instance moves once, by a "
          "graceful hand-over, to the first member of the new app_version "
          "that is up") {
  manager_world w;
  for (char c : std::string{"abcdef"})
    w.add(c);
  w.view_all("a:up:1@1 b:up:2@1 c:up:3@1");
  REQUIRE(w['a'].instance_running);
  // d (version 2) is up: it is the target at once; a hands over to it.
  w.view_all("a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2");
  CHECK(w['a'].engine.state() == manager_state::was_oldest);
  CHECK(w['a'].sent<take_over_from_me>('d') == 1);
  CHECK(w['d'].engine.state() == manager_state::becoming_oldest);
  // d asks every member ahead of it: the older ones, which may have run it
  CHECK(w['d'].sent<hand_over_to_me>('a') == 1);
  CHECK(w['d'].sent<hand_over_to_me>('b') == 1);
  CHECK(w['d'].sent<hand_over_to_me>('c') == 1);
  w.deliver('d');
  // b and c (up, version 1, nothing running) confirm at once; a stops
  CHECK(w['b'].sent<hand_over_done>('d') == 1);
  CHECK(w['c'].sent<hand_over_done>('d') == 1);
  w.settle();
  CHECK(w['a'].engine.state() == manager_state::handing_over);
  CHECK(w['a'].stop_pending);
  CHECK_FALSE(w['d'].instance_running); // never two at once
  w.terminated('a');
  w.settle();
  CHECK(w['d'].instance_running);
  CHECK(w.running() == 1);
  CHECK(w['a'].engine.state() == manager_state::younger);
  CHECK(w['a'].engine.counters().handed_over == 1);
  // The rest of the update: e and f come up, a, b and c leave. The
  // instance stays on d.
  w.view_all("a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2");
  w.view_all("a:leaving:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2 f:up:6@2");
  w.view_all("a:exiting:1@1 b:leaving:2@1 c:up:3@1 d:up:4@2 e:up:5@2 "
             "f:up:6@2");
  w.settle();
  w.view_all("c:exiting:3@1 d:up:4@2 e:up:5@2 f:up:6@2");
  w.settle();
  w.advance(30s);
  w.settle();
  CHECK(w['d'].instance_running);
  CHECK(w.running() == 1);
  CHECK(starts(w)
        == std::map<char, uint64_t>{
          {'a', 1}, {'b', 0}, {'c', 0}, {'d', 1}, {'e', 0}, {'f', 0}});
}

TEST_CASE("manager: a member of a higher app_version whose first view has "
          "it up already still waits for the older member that runs the "
          "instance") {
  // d and a became up in one leader step (d missed a's earlier views): a
  // is older but of the lower version, and it runs the instance.
  manager_world w;
  w.add('a');
  w.add('d');
  w.view('a', "a:up:1@1");
  REQUIRE(w['a'].instance_running);
  w.view('d', "a:up:1@1 d:up:2@2");
  CHECK_FALSE(w['d'].instance_running);
  CHECK(w['d'].engine.state() == manager_state::becoming_oldest);
  CHECK(w['d'].sent<hand_over_to_me>('a') == 1);
  w.view('a', "a:up:1@1 d:up:2@2");
  w.settle();
  CHECK(w.running() == 1);
  w.terminated('a');
  w.settle();
  CHECK(w['d'].instance_running);
  CHECK_FALSE(w['a'].instance_running);
}

TEST_CASE("manager: with one app_version the same update moves the instance "
          "once per replaced oldest node") {
  // The control case of the test above: without versions, the age order
  // alone hands the instance from old node to old node.
  manager_settings s;
  manager_world w;
  for (char c : std::string{"abcdef"})
    w.add(c, s);
  auto step = [&](std::string_view view, char exiting) {
    w.view_all(view);
    w.settle();
    if (w[exiting].stop_pending)
      w.terminated(exiting);
    w.settle();
  };
  w.view_all("a:up:1 b:up:2 c:up:3");
  step("a:up:1 b:up:2 c:up:3 d:up:4", 'a');
  CHECK(w['a'].instance_running);
  step("a:exiting:1 b:up:2 c:up:3 d:up:4", 'a');
  step("b:up:2 c:up:3 d:up:4 e:up:5", 'b');
  step("b:exiting:2 c:up:3 d:up:4 e:up:5", 'b');
  step("c:up:3 d:up:4 e:up:5 f:up:6", 'c');
  step("c:exiting:3 d:up:4 e:up:5 f:up:6", 'c');
  CHECK(w['d'].instance_running);
  CHECK(starts(w)
        == std::map<char, uint64_t>{
          {'a', 1}, {'b', 1}, {'c', 1}, {'d', 1}, {'e', 0}, {'f', 0}});
}

TEST_CASE("manager: an up member answers hand_over_to_me only from a member "
          "of a higher app_version, which it can never get ahead of") {
  // b (version 1, up, younger, nothing running) and the senders: a older
  // (version 1), c younger (version 1), d younger (version 2), e younger
  // (version 1.5 - a higher version too).
  using row = std::tuple<char, bool>;
  auto [from, answered] = GENERATE(table<char, bool>({
    row{'a', false},
    row{'c', false},
    row{'d', true},
    row{'e', true},
  }));
  INFO("from " << from);
  manager_world w;
  w.add('b');
  w.view('b', "a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@1.5");
  REQUIRE(w['b'].engine.state() == manager_state::younger);
  w['b'].apply(w['b'].engine.on_message(node(from), hand_over_to_me{}, w.now));
  CHECK(w['b'].sent<hand_over_done>(from) == (answered ? 1 : 0));
  CHECK(w['b'].engine.counters().ignored_messages == (answered ? 0 : 1));
  // The answer is not a promise never to run: b runs the instance once it
  // is the target and every member ahead of it is cleared, which d and e
  // (and a) are only by their own, permanent, confirmation or removal.
  w.view('b', "a:exiting:1@1 b:up:2@1 c:up:3@1 d:exiting:4@2 "
              "e:exiting:5@1.5");
  CHECK_FALSE(w['b'].instance_running);
  CHECK(w['b'].engine.state() == manager_state::becoming_oldest);
  for (char ahead : std::string{"ade"})
    CHECK(w['b'].sent<hand_over_to_me>(ahead) == 1);
  CHECK(w['b'].sent<hand_over_to_me>('c') == 0);
  for (char ahead : std::string{"ade"}) {
    CHECK_FALSE(w['b'].instance_running);
    w['b'].apply(
      w['b'].engine.on_message(node(ahead), hand_over_done{}, w.now));
  }
  CHECK(w['b'].instance_running);
}

TEST_CASE("manager: a member with an instance or lease business never "
          "answers a higher app_version's hand_over_to_me with a "
          "confirmation") {
  // a runs the instance (version 1, alone) when d (version 2) asks before a
  // saw it up: a ignores it (d asks again); with its view it hands over.
  manager_world w;
  w.add('a', with_lease());
  w.view('a', "a:up:1@1");
  w.acquired('a', true, 7);
  REQUIRE(w['a'].instance_running);
  w['a'].apply(w['a'].engine.on_message(node('d'), hand_over_to_me{}, w.now));
  CHECK(w['a'].sent<hand_over_done>('d') == 0);
  CHECK(w['a'].instance_running);
  w.view('a', "a:up:1@1 d:up:2@2");
  CHECK(w['a'].engine.state() == manager_state::was_oldest);
  w['a'].apply(w['a'].engine.on_message(node('d'), hand_over_to_me{}, w.now));
  CHECK(w['a'].engine.state() == manager_state::handing_over);
  CHECK(w['a'].sent<hand_over_done>('d') == 0);
  w.terminated('a');
  CHECK(w['a'].sent<hand_over_done>('d') == 0); // the lease first
  w.released('a');
  CHECK(w['a'].sent<hand_over_done>('d') == 1);
}

TEST_CASE("scenario S4: managers with the same view never both claim the "
          "target, whatever earlier views each saw") {
  // The views of a rolling update, in order. Each node saw some of the
  // views before the last (gossip reaches nodes unevenly), then the common
  // last view: the node that claims the target position (becoming_oldest,
  // taking_over, acquiring_lease, oldest) is that view's singleton target,
  // and at most one node claims it.
  const std::vector<std::string> views{
    "a:up:1@1 b:up:2@1 c:up:3@1",
    "a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2",
    "a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2",
    "a:leaving:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2",
    "a:exiting:1@1 b:up:2@1 c:up:3@1 d:leaving:4@2 e:up:5@2",
    "b:up:2@1 c:up:3@1 d:exiting:4@2 e:up:5@2",
    "b:up:2@1 c:up:3@1 e:up:5@2 f:up:6@3",
  };
  for (size_t last = 0; last < views.size(); ++last)
    for (size_t pattern = 0; pattern < 4; ++pattern) {
      manager_world w;
      for (char c : std::string{"abcdef"})
        w.add(c);
      size_t k = 0;
      for (auto& [self, n] : w.nodes) {
        for (size_t j = 0; j < last; ++j)
          if ((j + k + pattern) % 3 != 0)
            w.view(self, views[j]);
        ++k;
      }
      w.drop_all();
      w.view_all(views[last]);
      membership_state state{make_gossip(views[last]), node('a')};
      auto target = state.singleton_target();
      INFO("view " << views[last] << ", pattern " << pattern);
      int claims = 0;
      for (auto& [self, n] : w.nodes)
        if (claims_target(n)) {
          ++claims;
          REQUIRE(target);
          CHECK(node(self) == target->address);
        }
      CHECK(claims <= 1);
    }
}
