#include "manager_fixture.hpp"

// Scenarios S1 and S3 (../shared/scenarios/README.md) on the manager core:
// every hand-over message in every manager state, from every kind of
// sender, twice; and two members leaving together.

using namespace singleton_test;

namespace {

// The members around self `b` (up number 2): a is older, c younger and up,
// d leaving, e exiting. Views vary a's status per state.
constexpr std::string_view others = " c:up:3 d:leaving:4 e:exiting:5";

std::string view_with(std::string_view a_and_b) {
  return std::string{a_and_b} + std::string{others};
}

// A world whose node `b` is in `state` (see each case for how it gets
// there).
manager_world in_state(manager_state state) {
  manager_world w;
  auto s = state == manager_state::acquiring_lease
               || state == manager_state::stopping
             ? with_lease()
             : manager_settings{};
  auto& b = w.add('b', s);
  auto fx = [&](manager_effects x) { b.apply(std::move(x)); };
  switch (state) {
    case manager_state::start:
      break;
    case manager_state::younger:
      w.view('b', view_with("a:up:1 b:up:2"));
      break;
    case manager_state::becoming_oldest:
      w.view('b', view_with("a:down:1 b:up:2"));
      break;
    case manager_state::taking_over:
      w.view('b', view_with("a:down:1 b:up:2"));
      fx(b.engine.on_message(node('a'), hand_over_in_progress{}, w.now));
      break;
    case manager_state::acquiring_lease:
      w.view('b', view_with("b:up:2"));
      break;
    case manager_state::oldest:
      w.view('b', view_with("b:up:2"));
      break;
    case manager_state::was_oldest:
      w.view('b', view_with("b:up:2"));
      w.view('b', view_with("b:exiting:2"));
      break;
    case manager_state::handing_over:
      w.view('b', view_with("b:up:2"));
      w.view('b', view_with("b:exiting:2"));
      fx(b.engine.on_message(node('c'), hand_over_to_me{}, w.now));
      break;
    case manager_state::stopping:
      w.view('b', view_with("b:up:2"));
      w.acquired('b', true, 9);
      w.lost('b');
      break;
    case manager_state::end:
      w.view('b', view_with("a:up:1 b:leaving:2"));
      break;
  }
  b.outbox.clear();
  REQUIRE(b.engine.state() == state);
  return w;
}

constexpr manager_state all_states[] = {
  manager_state::start,           manager_state::younger,
  manager_state::becoming_oldest, manager_state::taking_over,
  manager_state::acquiring_lease, manager_state::oldest,
  manager_state::was_oldest,      manager_state::handing_over,
  manager_state::stopping,        manager_state::end,
};

const hand_over_message all_messages[] = {
  hand_over_to_me{},
  hand_over_in_progress{},
  hand_over_done{},
  take_over_from_me{},
};

} // namespace

TEST_CASE("scenario S3: every hand-over message in every manager state, from "
          "every kind of sender, twice") {
  // a: older; c: younger up (b's successor once b exits); d: leaving;
  // e: exiting; z: not a member.
  for (auto state : all_states)
    for (auto& msg : all_messages)
      for (char from : std::string{"acdez"}) {
        DYNAMIC_SECTION(to_string(state)
                        << " <- " << name_of(msg) << " from " << from) {
          auto w = in_state(state);
          auto& b = w['b'];
          bool had_instance = b.instance_running;
          auto first = b.apply(b.engine.on_message(node(from), msg, w.now));
          auto after_first = b.engine.state();
          // A leaving, exiting or unknown sender changes nothing; it gets
          // at most the permanent "nothing runs here" of a node that ended.
          if (from == 'd' || from == 'e' || from == 'z') {
            CHECK(after_first == state);
            CHECK_FALSE(first.stop_instance);
            CHECK_FALSE(first.start);
            for (auto& out : first.send)
              CHECK(std::holds_alternative<hand_over_done>(out.message));
          }
          // Only the expected successor (c, once b exits) takes the
          // instance away.
          if (first.stop_instance) {
            CHECK(from == 'c');
            CHECK(state == manager_state::was_oldest);
          }
          // A confirmation is only ever given with nothing running and the
          // lease free, and is permanent: b never runs again.
          for (auto& out : first.send)
            if (std::holds_alternative<hand_over_done>(out.message)) {
              CHECK_FALSE(b.instance_running);
              CHECK_FALSE(b.engine.lease_busy());
              CHECK((state == manager_state::end
                     || after_first == manager_state::end));
            }
          // Only a's confirmation may let b start (a is the older member
          // b waits for).
          if (first.start || first.acquire_lease) {
            CHECK(from == 'a');
            CHECK(std::holds_alternative<hand_over_done>(msg));
          }
          // The duplicate is idempotent: same state, nothing started or
          // stopped again.
          auto second = b.apply(b.engine.on_message(node(from), msg, w.now));
          CHECK(b.engine.state() == after_first);
          CHECK_FALSE(second.stop_instance);
          CHECK_FALSE(second.start);
          CHECK_FALSE(second.acquire_lease);
          CHECK_FALSE(second.release_lease);
          if (!first.stop_instance && !first.start)
            CHECK(b.instance_running == had_instance);
          // Progress is never blocked: the timer still runs where a state
          // waits for someone else.
          if (after_first == manager_state::becoming_oldest
              || after_first == manager_state::taking_over
              || after_first == manager_state::was_oldest)
            CHECK(b.engine.next_tick().has_value());
        }
      }
}

TEST_CASE("scenario S3: the expected exchanges, row by row") {
  SECTION("was_oldest: hand_over_to_me from the successor starts the "
          "hand-over and answers in_progress") {
    auto w = in_state(manager_state::was_oldest);
    auto fx = w['b'].apply(
      w['b'].engine.on_message(node('c'), hand_over_to_me{}, w.now));
    CHECK(fx.stop_instance);
    CHECK(w['b'].sent<hand_over_in_progress>('c') == 1);
    CHECK(w['b'].engine.state() == manager_state::handing_over);
  }
  SECTION("becoming_oldest: take_over_from_me from the older member is "
          "answered at once with hand_over_to_me") {
    auto w = in_state(manager_state::becoming_oldest);
    w['b'].apply(
      w['b'].engine.on_message(node('a'), take_over_from_me{}, w.now));
    CHECK(w['b'].sent<hand_over_to_me>('a') == 1);
    CHECK(w['b'].engine.state() == manager_state::taking_over);
  }
  SECTION("becoming_oldest: hand_over_done from the older member starts the "
          "instance") {
    auto w = in_state(manager_state::becoming_oldest);
    auto fx = w['b'].apply(
      w['b'].engine.on_message(node('a'), hand_over_done{}, w.now));
    CHECK(fx.start);
    CHECK(w['b'].engine.state() == manager_state::oldest);
  }
  SECTION("end: hand_over_to_me is answered with hand_over_done") {
    auto w = in_state(manager_state::end);
    w['b'].apply(w['b'].engine.on_message(node('c'), hand_over_to_me{}, w.now));
    CHECK(w['b'].sent<hand_over_done>('c') == 1);
  }
  SECTION("younger and up: hand_over_to_me is not answered (b could still "
          "become the oldest, so a confirmation would not be permanent)") {
    auto w = in_state(manager_state::younger);
    w['b'].apply(w['b'].engine.on_message(node('c'), hand_over_to_me{}, w.now));
    CHECK(w['b'].outbox.empty());
    CHECK(w['b'].engine.counters().ignored_messages == 1);
  }
  SECTION("handing_over: a repeated request from the successor is answered "
          "in_progress again, others are ignored") {
    auto w = in_state(manager_state::handing_over);
    w['b'].apply(w['b'].engine.on_message(node('c'), hand_over_to_me{}, w.now));
    w['b'].apply(w['b'].engine.on_message(node('a'), hand_over_to_me{}, w.now));
    CHECK(w['b'].sent<hand_over_in_progress>('c') == 1);
    CHECK(w['b'].sent<hand_over_in_progress>('a') == 0);
  }
}

TEST_CASE("scenario S1: the oldest and the next member leave within 100 ms "
          "=> the third starts only after the oldest's instance terminated") {
  manager_settings s;
  s.down_removal_margin = 20s;
  manager_world w;
  for (char c : std::string{"abcd"})
    w.add(c, s);
  w.view_all("a:up:1 b:up:2 c:up:3 d:up:4");
  REQUIRE(w['a'].instance_running);
  // both leave; the views spread unevenly
  w.view('a', "a:leaving:1 b:up:2 c:up:3 d:up:4");
  w.advance(100ms);
  w.view('b', "a:leaving:1 b:leaving:2 c:up:3 d:up:4");
  w.view('c', "a:leaving:1 b:leaving:2 c:up:3 d:up:4");
  w.view('d', "a:leaving:1 b:leaving:2 c:up:3 d:up:4");
  w.settle();
  CHECK(w['a'].instance_running);
  CHECK(w.running() == 1);
  // the leader moves both to exiting; b and c see it first, a still sees b
  // up (its view is behind)
  w.view('b', "a:exiting:1 b:exiting:2 c:up:3 d:up:4");
  w.view('c', "a:exiting:1 b:exiting:2 c:up:3 d:up:4");
  w.view('a', "a:exiting:1 b:up:2 c:up:3 d:up:4");
  // a asks b (its successor in its stale view) to take over; b is exiting
  // and never takes the instance; c asks both a and b
  CHECK(w['a'].sent<take_over_from_me>('b') == 1);
  CHECK(w['c'].engine.state() == manager_state::becoming_oldest);
  CHECK(w['c'].sent<hand_over_to_me>('a') == 1);
  CHECK(w['c'].sent<hand_over_to_me>('b') == 1);
  w.settle();
  // b confirmed it runs nothing, but c still waits for a, which ignores c
  // until its own view shows b exiting
  CHECK_FALSE(w['c'].instance_running);
  CHECK(w['a'].instance_running);
  CHECK(w['b'].engine.counters().handed_over == 0);
  w.advance(1s);
  w.settle();
  CHECK_FALSE(w['c'].instance_running);
  // a's view catches up: it hands over to c
  w.view('a', "a:exiting:1 b:exiting:2 c:up:3 d:up:4");
  w.advance(1s);
  w.settle();
  CHECK(w['a'].engine.state() == manager_state::handing_over);
  CHECK_FALSE(w['c'].instance_running);
  w.terminated('a');
  w.settle();
  CHECK(w['c'].instance_running);
  CHECK(w.running() == 1);
  CHECK_FALSE(w['b'].instance_running);
  CHECK_FALSE(w['d'].instance_running);
  // a's exit is released only once it handed over
  CHECK_FALSE(w['a'].exit_held);
}

TEST_CASE("scenario S1: the removal of an exiting member the new oldest "
          "never heard from counts only without a margin, never early") {
  // c missed the whole hand-over (its messages were lost): it starts when a
  // is removed from exiting, which happens only after a confirmed its exit
  // (the exit gate), i.e. after a's instance terminated.
  manager_settings s;
  manager_world w;
  for (char c : std::string{"ac"})
    w.add(c, s);
  w.view_all("a:up:1 c:up:2");
  w.view_all("a:exiting:1 c:up:2");
  w.drop_all();
  CHECK(w['a'].exit_held);
  w.advance(30s); // nobody asked a: it stops the instance anyway
  w.drop_all();
  CHECK(w['a'].stop_pending);
  CHECK(w['a'].exit_held);
  w.terminated('a');
  CHECK_FALSE(w['a'].exit_held);
  CHECK_FALSE(w['c'].instance_running);
  w.view('c', "c:up:2");
  CHECK(w['c'].instance_running);
}
