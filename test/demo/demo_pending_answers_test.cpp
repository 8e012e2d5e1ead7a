// The app API's table of requests waiting for their entity's answer: an
// answer in time, a timeout (504, not an exception), a late answer dropped.

#include <catch2/catch.hpp>

#include <thread>

#include "pending_answers.hpp"

using namespace troupe::demo;
using namespace std::chrono_literals;

TEST_CASE("pending answers: an answer in time is returned, a timeout gives "
          "none without throwing, and a late answer is dropped") {
  pending_answers t;
  auto [first, in_time] = t.open();
  t.fulfil(first, entity_answer{200, R"({"seq":1})"});
  auto a = t.await(first, in_time, 1s);
  REQUIRE(a);
  CHECK(a->status == 200);
  CHECK(a->body == R"({"seq":1})");
  // Nobody answers: none (before, the broken promise made get() throw,
  // and the server answered 500 instead of 504).
  auto [second, never] = t.open();
  CHECK(second != first);
  std::optional<entity_answer> none;
  CHECK_NOTHROW(none = t.await(second, never, 1ms));
  CHECK_FALSE(none);
  CHECK(t.size() == 0);
  t.fulfil(second, entity_answer{200, "late"}); // dropped
  CHECK(t.size() == 0);
  // A request that was never sent is forgotten.
  auto [third, unsent] = t.open();
  t.forget(third);
  CHECK(t.size() == 0);
}

TEST_CASE("pending answers: an answer from another thread wakes the "
          "waiting request") {
  pending_answers t;
  auto [request, answer] = t.open();
  std::thread reply{[&t, r = request] {
    t.fulfil(r, entity_answer{503, "conflict"});
  }};
  auto a = t.await(request, answer, 10s);
  reply.join();
  REQUIRE(a);
  CHECK(a->status == 503);
}
