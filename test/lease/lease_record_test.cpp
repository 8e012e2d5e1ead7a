#include <catch2/catch.hpp>

#include "troupe/lease/lease_record.hpp"

using namespace std::chrono_literals;
using namespace troupe::lease;

namespace {

const timestamp t0{std::chrono::hours{1}};

backend_request req(std::string owner, uint64_t acquisition) {
  return backend_request{"jobs", std::move(owner), 10s, acquisition, 0};
}

} // namespace

TEST_CASE("lease_record: acquire rules") {
  using row = std::tuple<std::string, lease_record, backend_request, timespan,
                         backend_status, std::string, uint64_t>;
  // record before, request, time offset, status, holder after, token after
  auto [label, before, r, dt, status, holder, token]
    = GENERATE(table<std::string, lease_record, backend_request, timespan,
                     backend_status, std::string, uint64_t>({
      row{"free record: first token is 1", lease_record{}, req("a", 1), 0s,
          backend_status::ok, "a", 1},
      row{"held by other: held", lease_record{"b", 7, 4, t0 + 5s, 4},
          req("a", 1), 0s, backend_status::held, "b", 4},
      row{"expired: new acquisition, next token",
          lease_record{"b", 7, 4, t0 + 5s, 4}, req("a", 1), 5s,
          backend_status::ok, "a", 5},
      row{"released record keeps counting", lease_record{"", 0, 4, {}, 4},
          req("a", 1), 0s, backend_status::ok, "a", 5},
      row{"same acquisition retried: same token (lost reply)",
          lease_record{"a", 1, 4, t0 + 5s, 4}, req("a", 1), 0s,
          backend_status::ok, "a", 4},
      row{"same owner, other live acquisition: held (a delayed old request "
          "never replaces the current one)",
          lease_record{"a", 1, 4, t0 + 5s, 4}, req("a", 2), 0s,
          backend_status::held, "a", 4},
      row{"same owner, new acquisition after expiry: new token",
          lease_record{"a", 1, 4, t0 + 5s, 4}, req("a", 2), 5s,
          backend_status::ok, "a", 5},
    }));
  INFO(label);
  auto rec = before;
  auto reply = apply(backend_op::acquire, rec, r, t0 + dt);
  CHECK(reply.status == status);
  CHECK(reply.holder == holder);
  CHECK(reply.token == token);
  if (status == backend_status::ok) {
    CHECK(rec.expires_at == t0 + dt + 10s);
    CHECK(rec.last_token == token);
  } else {
    CHECK(rec == before);
  }
}

TEST_CASE("lease_record: renew never resurrects and never steals") {
  using row = std::tuple<std::string, lease_record, timespan, backend_status>;
  auto [label, before, dt, status]
    = GENERATE(table<std::string, lease_record, timespan, backend_status>({
      row{"own unexpired record: extended", lease_record{"a", 1, 3, t0 + 5s, 3},
          1s, backend_status::ok},
      row{"own expired record: not found", lease_record{"a", 1, 3, t0 + 5s, 3},
          5s, backend_status::not_found},
      row{"foreign record: held", lease_record{"b", 9, 4, t0 + 5s, 4}, 1s,
          backend_status::held},
      row{"own owner, other acquisition: held",
          lease_record{"a", 2, 4, t0 + 5s, 4}, 1s, backend_status::held},
      row{"no record: not found", lease_record{}, 0s,
          backend_status::not_found},
    }));
  INFO(label);
  auto rec = before;
  auto reply = apply(backend_op::renew, rec, req("a", 1), t0 + dt);
  CHECK(reply.status == status);
  if (status == backend_status::ok)
    CHECK(rec.expires_at == t0 + dt + 10s);
  else
    CHECK(rec == before);
}

TEST_CASE("lease_record: release clears only the caller's record") {
  lease_record rec{"a", 1, 3, t0 + 5s, 3};
  auto foreign = apply(backend_op::release, rec, req("b", 9), t0);
  CHECK(foreign.status == backend_status::held);
  CHECK(rec.holder == "a");
  auto own = apply(backend_op::release, rec, req("a", 1), t0);
  CHECK(own.status == backend_status::ok);
  CHECK(rec.holder.empty());
  CHECK(rec.last_token == 3);
  auto again = apply(backend_op::release, rec, req("a", 1), t0);
  CHECK(again.status == backend_status::not_found);
}
