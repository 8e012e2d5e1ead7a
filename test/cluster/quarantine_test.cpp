#include <catch2/catch.hpp>

#include "troupe/cluster/quarantine.hpp"

using namespace troupe::cluster;

namespace {

unique_address at(uint64_t uid, uint16_t port = 2552) {
  return unique_address{"10.0.0.1", port, uid};
}

} // namespace

TEST_CASE("quarantine: first incarnation is admitted and becomes current") {
  quarantine_registry q;
  auto r = q.admit(at(1));
  CHECK(r.admitted);
  CHECK(!r.replaced);
  CHECK(q.current_uid({"10.0.0.1", 2552}) == 1u);
  // The same uid again (a reconnect) replaces nothing.
  r = q.admit(at(1));
  CHECK(r.admitted);
  CHECK(!r.replaced);
  CHECK(!q.is_quarantined(at(1)));
}

TEST_CASE("quarantine: a new uid at the same host:port replaces the old") {
  quarantine_registry q;
  q.admit(at(1));
  auto r = q.admit(at(2));
  CHECK(r.admitted);
  REQUIRE(r.replaced);
  CHECK(*r.replaced == at(1));
  CHECK(q.is_quarantined(at(1)));
  CHECK(q.current_uid({"10.0.0.1", 2552}) == 2u);
  // The old incarnation coming back is refused, and changes nothing.
  r = q.admit(at(1));
  CHECK(!r.admitted);
  CHECK(q.current_uid({"10.0.0.1", 2552}) == 2u);
}

TEST_CASE("quarantine: endpoints are independent") {
  quarantine_registry q;
  q.admit(at(1, 2552));
  auto r = q.admit(at(2, 2553));
  CHECK(r.admitted);
  CHECK(!r.replaced);
  CHECK(!q.is_quarantined(at(1, 2552)));
  // Same uid value at another port is another node.
  q.quarantine(at(7, 2552));
  CHECK(q.is_quarantined(at(7, 2552)));
  CHECK(!q.is_quarantined(at(7, 2553)));
}

TEST_CASE("quarantine: removal quarantines the current incarnation") {
  quarantine_registry q;
  q.admit(at(1));
  CHECK(q.quarantine(at(1)));
  CHECK(!q.quarantine(at(1))); // idempotent
  CHECK(!q.current_uid({"10.0.0.1", 2552}));
  CHECK(!q.admit(at(1)).admitted);
  auto r = q.admit(at(2)); // the restarted node
  CHECK(r.admitted);
  CHECK(!r.replaced); // already quarantined: nothing new to replace
  CHECK(!q.quarantine(at(0)));
  CHECK(!q.admit(at(0)).admitted);
}

TEST_CASE("quarantine: history per endpoint is bounded, oldest forgotten") {
  quarantine_registry q{3};
  for (uint64_t uid = 1; uid <= 5; ++uid)
    q.admit(at(uid)); // 1..4 quarantined in turn, 5 current
  CHECK(!q.is_quarantined(at(1)));
  CHECK(q.is_quarantined(at(2)));
  CHECK(q.is_quarantined(at(3)));
  CHECK(q.is_quarantined(at(4)));
  CHECK(q.current_uid({"10.0.0.1", 2552}) == 5u);
}
