#include "manager_fixture.hpp"

using namespace singleton_test;

namespace {

manager_settings fast(manager_settings s = {}) {
  s.down_removal_margin = 10s;
  return s;
}

} // namespace

TEST_CASE("manager: the oldest up member starts the instance, younger ones "
          "do not") {
  manager_world w;
  w.add('a');
  w.add('b');
  w.add('c');
  w.view_all("a:up:1 b:up:2 c:up:3");
  CHECK(w['a'].instance_running);
  CHECK(w['a'].token == 0);
  CHECK(w['a'].engine.state() == manager_state::oldest);
  CHECK(w['b'].engine.state() == manager_state::younger);
  CHECK(w['c'].engine.state() == manager_state::younger);
  CHECK(w.running() == 1);
  CHECK(w['a'].exit_held);
  CHECK_FALSE(w['b'].exit_held);
}

TEST_CASE("manager: age is the up number, not the address") {
  manager_world w;
  w.add('a');
  w.add('b');
  w.view_all("a:up:2 b:up:1");
  CHECK(w['b'].instance_running);
  CHECK_FALSE(w['a'].instance_running);
}

TEST_CASE("manager: never on a weakly_up or joining member, nor without the "
          "role") {
  manager_settings s;
  s.role = "scheduler";
  manager_world w;
  w.add('a', s);
  w.add('b', s);
  w.add('c', s);
  w.view_all("a:up:1:web b:weakly_up c:up:2:scheduler");
  CHECK_FALSE(w['a'].instance_running);
  CHECK_FALSE(w['b'].instance_running);
  CHECK(w['c'].instance_running);
  // a weakly_up member alone never starts it
  manager_world alone;
  alone.add('a');
  alone.view('a', "a:weakly_up");
  CHECK_FALSE(alone['a'].instance_running);
  alone.view('a', "a:joining");
  CHECK_FALSE(alone['a'].instance_running);
  alone.view('a', "a:up:1");
  CHECK(alone['a'].instance_running);
}

TEST_CASE("manager: graceful leave of the oldest hands over only after the "
          "instance terminated") {
  manager_world w;
  w.add('a', fast());
  w.add('b', fast());
  w.add('c', fast());
  w.view_all("a:up:1 b:up:2 c:up:3");
  REQUIRE(w['a'].instance_running);
  // a leaves: it stays the oldest while leaving (Akka)
  w.view_all("a:leaving:1 b:up:2 c:up:3");
  CHECK(w['a'].engine.state() == manager_state::oldest);
  CHECK(w['b'].engine.state() == manager_state::younger);
  // a exiting: b is the new oldest and asks a; a tells b to take over
  w.view_all("a:exiting:1 b:up:2 c:up:3");
  CHECK(w['a'].engine.state() == manager_state::was_oldest);
  CHECK(w['a'].sent<take_over_from_me>('b') == 1);
  CHECK(w['b'].engine.state() == manager_state::becoming_oldest);
  CHECK(w['b'].sent<hand_over_to_me>('a') == 1);
  CHECK_FALSE(w['b'].instance_running);
  w.settle();
  CHECK(w['a'].engine.state() == manager_state::handing_over);
  CHECK(w['a'].stop_pending);
  CHECK(w['a'].exit_held);
  CHECK_FALSE(w['b'].instance_running);
  // only the termination lets the hand-over finish
  w.advance(5s);
  w.settle();
  CHECK_FALSE(w['b'].instance_running);
  w.terminated('a');
  CHECK(w['a'].sent<hand_over_done>('b') == 1);
  CHECK(w['a'].engine.state() == manager_state::end);
  CHECK_FALSE(w['a'].exit_held);
  w.settle();
  CHECK(w['b'].instance_running);
  CHECK(w['b'].engine.state() == manager_state::oldest);
  CHECK(w.running() == 1);
  CHECK(w['a'].engine.counters().handed_over == 1);
}

TEST_CASE("manager: the oldest leaving with nobody up to take over stops "
          "its instance at once and lets the node exit") {
  // The whole cluster stopping at once: every member leaves.
  manager_world w;
  w.add('a', fast());
  w.add('b', fast());
  w.view_all("a:up:1 b:up:2");
  REQUIRE(w['a'].instance_running);
  w.view_all("a:leaving:1 b:leaving:2");
  w.view_all("a:exiting:1 b:exiting:2");
  // No hand-over request can come: a stops now, not after the take-over
  // retries, and releases the exit once its instance terminated.
  CHECK(w['a'].stop_pending);
  CHECK(w['a'].exit_held);
  w.terminated('a');
  CHECK(w['a'].engine.state() == manager_state::end);
  CHECK_FALSE(w['a'].exit_held);
  CHECK(w.running() == 0);
  CHECK(w['a'].sent<take_over_from_me>('b') == 0);
}

TEST_CASE("manager: after a crash the new oldest waits until the old oldest is "
          "down, removed and the removal margin passed") {
  manager_world w;
  w.add('b', fast());
  w.add('c', fast());
  w.view_all("a:up:1 b:up:2 c:up:3");
  CHECK(w.running() == 0);
  // a crashed: unreachable but up: nobody takes over
  w.advance(30s);
  CHECK(w.running() == 0);
  // downed: b becomes the oldest but a is not cleared
  w.view_all("a:down:1 b:up:2 c:up:3");
  CHECK(w['b'].engine.state() == manager_state::becoming_oldest);
  w.advance(5s);
  CHECK(w.running() == 0);
  // removed: the margin starts
  w.view_all("b:up:2 c:up:3");
  CHECK(w.running() == 0);
  w.advance(9s);
  CHECK(w.running() == 0);
  w.advance(1s);
  CHECK(w['b'].instance_running);
  CHECK(w.running() == 1);
}

TEST_CASE("manager: an exited (not downed) older member needs no margin") {
  manager_world w;
  w.add('b', fast());
  w.view('b', "a:up:1 b:up:2");
  w.view('b', "a:exiting:1 b:up:2");
  CHECK_FALSE(w['b'].instance_running);
  w.view('b', "b:up:2");
  CHECK(w['b'].instance_running);
}

TEST_CASE("manager: an exiting older member removed (or downed and removed) "
          "while unreachable is cleared only once its take-over retries ran "
          "out") {
  // The leader removed it without its exit confirmation, and in its own
  // view it is exiting, where the resolver ignores it: it may run its
  // instance on the other side until its take-over retries run out
  // (singleton sim, seeds 474 and 1110).
  manager_world w;
  auto s = fast();
  w.add('b', s);
  w.view('b', "a:up:1 b:up:2");
  w.view('b', "a:exiting:1 b:up:2");
  w.view('b', "a:exiting:1 b:up:2", "b>a");
  SECTION("removed from exiting") {}
  SECTION("downed, then removed") {
    w.view('b', "a:down:1 b:up:2", "b>a");
  }
  w.view('b', "b:up:2");
  auto bound = s.hand_over_retry_interval * (max_take_over_retries(s) + 1);
  REQUIRE(bound > s.down_removal_margin);
  w.advance(bound - 1s);
  CHECK_FALSE(w['b'].instance_running);
  w.advance(1s);
  CHECK(w['b'].instance_running);
}

TEST_CASE("manager: a stuck hand-over restarts the protocol, logs an error, "
          "and never touches the instance") {
  manager_settings s;
  s.min_number_of_hand_over_retries = 3;
  manager_world w;
  w.add('b', s);
  w.view('b', "a:up:1 b:up:2");
  w.view('b', "a:down:1 b:up:2");
  REQUIRE(w['b'].engine.state() == manager_state::becoming_oldest);
  w.advance(10s);
  w.drop_all();
  CHECK(w['b'].engine.counters().stuck >= 2);
  CHECK_FALSE(w['b'].instance_running);
  bool logged = false;
  for (auto& fx : w['b'].effects)
    for (auto& line : fx.log)
      logged = logged
               || (line.level == log_level::error
                   && line.text.find("hand-over stuck") != std::string::npos);
  CHECK(logged);
  // still asking a every second
  w.advance(1s);
  CHECK(w['b'].sent<hand_over_to_me>('a') == 1);
}

TEST_CASE("manager: an instance that stops by itself is restarted with "
          "doubling backoff") {
  manager_settings s;
  s.restart_min_backoff = 1s;
  s.restart_max_backoff = 4s;
  manager_world w;
  w.add('a', s);
  w.view('a', "a:up:1");
  REQUIRE(w['a'].incarnation == 1);
  w.terminated('a');
  CHECK_FALSE(w['a'].instance_running);
  w.advance(999ms);
  CHECK_FALSE(w['a'].instance_running);
  w.advance(1ms);
  CHECK(w['a'].instance_running);
  CHECK(w['a'].incarnation == 2);
  w.terminated('a');
  w.advance(1999ms);
  CHECK_FALSE(w['a'].instance_running);
  w.advance(1ms);
  CHECK(w['a'].incarnation == 3);
  // a stale report of an old incarnation changes nothing
  w['a'].apply(w['a'].engine.on_instance_terminated(1, w.now));
  CHECK(w['a'].engine.running_instance() == 3);
  // a long run resets the backoff
  w.advance(10s);
  w.terminated('a');
  w.advance(1s);
  CHECK(w['a'].incarnation == 4);
}

TEST_CASE("manager: restart_on_stop false leaves the oldest without an "
          "instance (Akka)") {
  manager_settings s;
  s.restart_on_stop = false;
  manager_world w;
  w.add('a', s);
  w.view('a', "a:up:1");
  w.terminated('a');
  w.advance(1h);
  CHECK_FALSE(w['a'].instance_running);
  CHECK(w['a'].engine.state() == manager_state::oldest);
}

TEST_CASE("manager: a downed oldest stops its instance and ends") {
  manager_world w;
  w.add('a');
  w.view('a', "a:up:1 b:up:2");
  REQUIRE(w['a'].instance_running);
  w.view('a', "a:down:1 b:up:2");
  CHECK(w['a'].stop_pending);
  CHECK(w['a'].engine.state() == manager_state::stopping);
  w.terminated('a');
  CHECK(w['a'].engine.state() == manager_state::end);
  CHECK_FALSE(w['a'].exit_held);
}

TEST_CASE("manager: stop() stops the instance, then reports stopped") {
  manager_world w;
  w.add('a');
  w.view('a', "a:up:1");
  auto& fx = w['a'].apply(w['a'].engine.stop(w.now));
  CHECK(fx.stop_instance);
  CHECK_FALSE(fx.stopped);
  auto& done = w.terminated('a');
  CHECK(done.stopped);
  CHECK(w['a'].engine.state() == manager_state::end);
  // a younger stops at once
  manager_world y;
  y.add('b');
  y.view('b', "a:up:1 b:up:2");
  CHECK(y['b'].apply(y['b'].engine.stop(y.now)).stopped);
}

// -- the lease ----------------------------------------------------------------

TEST_CASE("manager with lease: acquire before the start, the instance gets "
          "the fencing token") {
  manager_world w;
  w.add('a', with_lease());
  w.view('a', "a:up:1");
  CHECK_FALSE(w['a'].instance_running);
  CHECK(w['a'].acquire_pending);
  CHECK(w['a'].engine.state() == manager_state::acquiring_lease);
  CHECK(w['a'].exit_held);
  w.acquired('a', true, 41);
  CHECK(w['a'].instance_running);
  CHECK(w['a'].token == 41);
  CHECK(w['a'].engine.fencing_token() == 41);
}

TEST_CASE("manager with lease: blocked by another holder, asks again every "
          "lease_retry_interval") {
  manager_world w;
  w.add('a', with_lease());
  w.view('a', "a:up:1");
  w.acquired('a', false, 0);
  CHECK(w['a'].engine.state() == manager_state::acquiring_lease);
  w.advance(4999ms);
  CHECK_FALSE(w['a'].acquire_pending);
  w.advance(1ms);
  CHECK(w['a'].acquire_pending);
  w.acquired('a', false, 0);
  w.advance(5s);
  w.acquired('a', true, 7);
  CHECK(w['a'].instance_running);
  CHECK(w['a'].token == 7);
}

TEST_CASE("manager with lease: lease lost -> the instance stops at once, the "
          "lease is acquired again after it terminated, with a new token") {
  auto w = leased_oldest(5);
  auto& fx = w.lost('a');
  CHECK(fx.stop_instance);
  CHECK_FALSE(fx.acquire_lease);
  CHECK_FALSE(w['a'].acquire_pending);
  w.terminated('a');
  CHECK(w['a'].acquire_pending);
  CHECK_FALSE(w['a'].release_pending);
  w.acquired('a', true, 6);
  CHECK(w['a'].instance_running);
  CHECK(w['a'].incarnation == 2);
  CHECK(w['a'].token == 6);
  CHECK(w['a'].engine.counters().leases_lost == 1);
}

TEST_CASE("manager with lease: a graceful stop releases only after the "
          "instance terminated, and waits for the release") {
  auto w = leased_oldest(5);
  auto& fx = w['a'].apply(w['a'].engine.stop(w.now));
  CHECK(fx.stop_instance);
  CHECK_FALSE(fx.release_lease);
  auto& after = w.terminated('a');
  CHECK(after.release_lease);
  CHECK_FALSE(after.stopped);
  CHECK(w['a'].exit_held);
  auto& done = w.released('a');
  CHECK(done.stopped);
  CHECK_FALSE(w['a'].exit_held);
}

TEST_CASE("manager with lease: hand-over releases after the termination and "
          "confirms after the release, then the new oldest acquires") {
  manager_world w;
  w.add('a', with_lease());
  w.add('b', with_lease());
  w.view_all("a:up:1 b:up:2");
  w.acquired('a', true, 1);
  w.view_all("a:exiting:1 b:up:2");
  w.settle();
  w.terminated('a');
  CHECK(w['a'].release_pending);
  CHECK(w['a'].sent<hand_over_done>('b') == 0);
  w.released('a');
  CHECK(w['a'].sent<hand_over_done>('b') == 1);
  w.settle();
  CHECK(w['b'].acquire_pending);
  w.acquired('b', true, 2);
  CHECK(w['b'].instance_running);
  CHECK(w['b'].token == 2);
}

TEST_CASE("manager with lease: an acquisition answered after the node "
          "stopped needing it is released at once") {
  manager_world w;
  w.add('a', with_lease());
  w.view('a', "a:up:1 b:up:2");
  REQUIRE(w['a'].acquire_pending);
  w.view('a', "a:exiting:1 b:up:2");
  auto& fx = w.acquired('a', true, 3);
  CHECK(fx.release_lease);
  CHECK_FALSE(w['a'].instance_running);
  w.released('a');
  CHECK_FALSE(w['a'].exit_held);
}

TEST_CASE("manager with lease: an instance that stopped by itself releases the "
          "lease and restarts through a new acquisition") {
  auto w = leased_oldest(10);
  auto& fx = w.terminated('a');
  CHECK(fx.release_lease);
  w.released('a');
  w.advance(1s);
  CHECK(w['a'].acquire_pending);
  w.acquired('a', true, 11);
  CHECK(w['a'].token == 11);
  CHECK(w['a'].incarnation == 2);
}

// -- an instance that does not stop -------------------------------------------

TEST_CASE("manager: an instance that does not terminate within "
          "instance_stop_timeout of its stop message is killed, once, in "
          "every kind of stop") {
  auto killed_after = [](manager_world& w, char self) {
    // Nothing before the timeout, one kill (with an ERROR line) at it.
    auto asked = w.now;
    w.advance(9999ms);
    CHECK(w[self].kills == 0);
    w.advance(1ms);
    CHECK(w[self].kills == 1);
    CHECK(w.now - asked == 10s);
    auto& fx = w[self].effects.back();
    CHECK(fx.kill_instance);
    REQUIRE_FALSE(fx.log.empty());
    CHECK(fx.log.front().level == log_level::error);
    CHECK(fx.log.front().text.find("singleton.instance_stop_timeout")
          != std::string::npos);
    // Nothing more while the kill takes effect.
    w.advance(30s);
    CHECK(w[self].kills == 1);
    CHECK(w[self].instance_running);
  };
  SECTION("hand-over") {
    manager_world w;
    w.add('a', with_lease());
    w.add('b', with_lease());
    w.view_all("a:up:1 b:up:2");
    w.acquired('a', true, 1);
    w.view_all("a:exiting:1 b:up:2");
    w.settle();
    REQUIRE(w['a'].stop_pending);
    REQUIRE(w['a'].engine.state() == manager_state::handing_over);
    killed_after(w, 'a');
    w.terminated('a');
    w.released('a');
    w.settle();
    CHECK(w['b'].acquire_pending);
    CHECK_FALSE(w['a'].exit_held);
  }
  SECTION("lease lost") {
    auto w = leased_oldest(1);
    w.lost('a');
    REQUIRE(w['a'].stop_pending);
    killed_after(w, 'a');
    w.terminated('a');
    CHECK(w['a'].acquire_pending);
  }
  SECTION("graceful stop") {
    manager_world w;
    w.add('a');
    w.view('a', "a:up:1");
    w['a'].apply(w['a'].engine.stop(w.now));
    REQUIRE(w['a'].stop_pending);
    killed_after(w, 'a');
    CHECK(w.terminated('a').stopped);
  }
  SECTION("downed") {
    manager_world w;
    w.add('a');
    w.view('a', "a:up:1 b:up:2");
    w.view('a', "a:down:1 b:up:2");
    REQUIRE(w['a'].stop_pending);
    killed_after(w, 'a');
    w.terminated('a');
    CHECK(w['a'].engine.state() == manager_state::end);
  }
  SECTION("an instance that terminates in time is never killed") {
    manager_world w;
    w.add('a');
    w.view('a', "a:up:1");
    w['a'].apply(w['a'].engine.stop(w.now));
    w.advance(9s);
    w.terminated('a');
    w.advance(1min);
    CHECK(w['a'].kills == 0);
  }
}

// -- races the shell can produce
// ------------------------------------------------

TEST_CASE("manager: hand-over messages before the first view change nothing "
          "and are answered once the view came") {
  manager_world w;
  w.add('b');
  auto& n = w['b'];
  for (auto m : {hand_over_message{hand_over_to_me{}},
                 hand_over_message{take_over_from_me{}},
                 hand_over_message{hand_over_in_progress{}},
                 hand_over_message{hand_over_done{}}}) {
    auto& fx = n.apply(n.engine.on_message(node('a'), m, w.now));
    CHECK(fx.send.empty());
    CHECK_FALSE(fx.start);
    CHECK(n.engine.state() == manager_state::start);
  }
  CHECK(n.engine.counters().ignored_messages == 4);
  // The view: a exiting, b the new oldest asks a (a's repeated
  // take_over_from_me is then taken).
  w.view('b', "a:exiting:1 b:up:2");
  CHECK(n.engine.state() == manager_state::becoming_oldest);
  CHECK(n.sent<hand_over_to_me>('a') == 1);
  CHECK_FALSE(n.instance_running);
}

TEST_CASE("manager with lease: the instance stopping by itself and the lease "
          "loss at the same moment, in either order, end with one instance "
          "on a new acquisition") {
  SECTION("terminated, then lost") {
    auto w = leased_oldest(5);
    CHECK(w.terminated('a').release_lease);
    auto& lost = w.lost('a');
    CHECK_FALSE(lost.stop_instance);
    CHECK_FALSE(lost.acquire_lease);
    w.released('a');
    w.advance(1s);
    REQUIRE(w['a'].acquire_pending);
    w.acquired('a', true, 6);
    CHECK(w['a'].instance_running);
    CHECK(w['a'].token == 6);
  }
  SECTION("lost, then terminated") {
    auto w = leased_oldest(5);
    CHECK(w.lost('a').stop_instance);
    auto& fx = w.terminated('a');
    CHECK_FALSE(fx.release_lease); // lost: nothing to release
    REQUIRE(w['a'].acquire_pending);
    w.acquired('a', true, 6);
    CHECK(w['a'].instance_running);
    CHECK(w['a'].incarnation == 2);
  }
}

TEST_CASE("manager with lease: a lease answer after stop() finished, or a "
          "second stop(), changes nothing") {
  auto w = leased_oldest(5);
  auto& n = w['a'];
  n.apply(n.engine.stop(w.now));
  w.terminated('a');
  CHECK(w.released('a').stopped);
  CHECK(n.engine.state() == manager_state::end);
  CHECK(n.apply(n.engine.stop(w.now)).empty());
  CHECK(n.apply(n.engine.on_lease_acquired(true, 9, w.now)).send.empty());
  CHECK(n.apply(n.engine.on_lease_released(w.now)).empty());
  CHECK(n.apply(n.engine.on_lease_lost(0, w.now)).empty());
  CHECK_FALSE(n.instance_running);
  CHECK_FALSE(n.release_pending);
  CHECK_FALSE(n.exit_held);
}

TEST_CASE("manager with lease: the loss of an earlier acquisition is "
          "ignored") {
  auto w = leased_oldest(5);
  auto& n = w['a'];
  CHECK(n.apply(n.engine.on_lease_lost(4, w.now)).empty());
  CHECK(n.instance_running);
  CHECK(n.apply(n.engine.on_lease_lost(5, w.now)).stop_instance);
}
