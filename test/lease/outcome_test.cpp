#include <catch2/catch.hpp>

#include "troupe/lease/outcome.hpp"

using namespace troupe::lease;
using k = outcome_kind;

TEST_CASE("outcome: classification table") {
  using row = std::tuple<backend_op, backend_status, std::string, uint64_t,
                         outcome_kind>;
  // op, status, holder in reply, acquisition in reply, expected
  auto [op, status, holder, acq, expected] = GENERATE(
    table<backend_op, backend_status, std::string, uint64_t, outcome_kind>({
      row{backend_op::acquire, backend_status::ok, "me", 1, k::success},
      row{backend_op::acquire, backend_status::held, "me", 1, k::success},
      row{backend_op::acquire, backend_status::held, "me", 0, k::success},
      row{backend_op::acquire, backend_status::held, "me", 2, k::held_by_other},
      row{backend_op::acquire, backend_status::held, "other", 0,
          k::held_by_other},
      row{backend_op::acquire, backend_status::unavailable, "", 0, k::retry},
      row{backend_op::acquire, backend_status::conflict, "", 0, k::retry},
      row{backend_op::acquire, backend_status::not_found, "", 0, k::retry},
      row{backend_op::acquire, backend_status::rejected, "", 0, k::refused},
      row{backend_op::renew, backend_status::ok, "me", 1, k::success},
      // scenario L3: our renewal applied, reply lost, conflict names us
      row{backend_op::renew, backend_status::held, "me", 1, k::success},
      row{backend_op::renew, backend_status::held, "me", 0, k::success},
      row{backend_op::renew, backend_status::held, "other", 0, k::lost},
      row{backend_op::renew, backend_status::not_found, "", 0, k::lost},
      // scenario L2: transient failures are retried, never "lost"
      row{backend_op::renew, backend_status::unavailable, "", 0, k::retry},
      row{backend_op::renew, backend_status::conflict, "", 0, k::retry},
      row{backend_op::renew, backend_status::rejected, "", 0, k::retry},
      row{backend_op::release, backend_status::ok, "", 0, k::success},
      // scenario L12: "not the owner any more" counts as released
      row{backend_op::release, backend_status::not_found, "", 0, k::success},
      row{backend_op::release, backend_status::held, "other", 0, k::success},
      row{backend_op::release, backend_status::held, "me", 1, k::retry},
      row{backend_op::release, backend_status::unavailable, "", 0, k::retry},
      row{backend_op::release, backend_status::rejected, "", 0, k::refused},
    }));
  backend_reply r;
  r.status = status;
  r.holder = holder;
  r.acquisition = acq;
  INFO(to_string(op) << " " << to_string(status) << " holder=" << holder
                     << " acq=" << acq);
  CHECK(classify(op, r, "me", 1).kind == expected);
}

TEST_CASE("outcome: a holder name from the store is escaped in the reason") {
  // holderIdentity (Kubernetes) and the key's value (etcd) are written by
  // whoever holds the lease: a newline or an escape sequence in it must not
  // forge log lines when the reason is logged.
  backend_reply r;
  r.status = backend_status::held;
  r.holder = "evil\n2026-01-01T00:00:00Z error   lease: forged\x1b[31m";
  r.token = 3;
  for (auto op : {backend_op::acquire, backend_op::renew}) {
    auto o = classify(op, r, "me", 1);
    INFO(o.why);
    CHECK(o.why.find('\n') == std::string::npos);
    CHECK(o.why.find('\x1b') == std::string::npos);
    CHECK(o.why.find("evil\\x0a") != std::string::npos);
  }
}
