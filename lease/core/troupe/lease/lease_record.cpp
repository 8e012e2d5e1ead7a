#include "troupe/lease/lease_record.hpp"

namespace troupe::lease {

namespace {

backend_reply reply(backend_status status, const lease_record& rec) {
  return backend_reply{status, rec.holder, rec.token, rec.acquisition, {}};
}

bool is_caller(const lease_record& rec, const backend_request& req) {
  return rec.holder == req.owner && rec.acquisition == req.acquisition;
}

} // namespace

backend_reply apply(backend_op op, lease_record& rec,
                    const backend_request& req, timestamp now) {
  bool held = rec.is_held(now);
  switch (op) {
    case backend_op::acquire:
      if (held && is_caller(rec, req)) {
        rec.expires_at = now + req.ttl;
        return reply(backend_status::ok, rec);
      }
      // A live record of another acquisition blocks, even when it names the
      // same owner: it may be a delayed request of an older acquisition of
      // ours, and it must never replace the current one (found by the
      // safety property test, seed 1).
      if (held)
        return reply(backend_status::held, rec);
      rec.holder = req.owner;
      rec.acquisition = req.acquisition;
      rec.token = ++rec.last_token;
      rec.expires_at = now + req.ttl;
      return reply(backend_status::ok, rec);
    case backend_op::renew:
      if (held && is_caller(rec, req)) {
        rec.expires_at = now + req.ttl;
        return reply(backend_status::ok, rec);
      }
      if (held)
        return reply(backend_status::held, rec);
      return reply(backend_status::not_found, lease_record{});
    case backend_op::release:
      if (held && is_caller(rec, req)) {
        rec.holder.clear();
        rec.acquisition = 0;
        rec.expires_at = timestamp{};
        return reply(backend_status::ok, rec);
      }
      if (held)
        return reply(backend_status::held, rec);
      return reply(backend_status::not_found, lease_record{});
  }
  return reply(backend_status::rejected, rec);
}

std::string_view absence_of(const lease_record& rec, timestamp now) noexcept {
  if (rec.holder.empty())
    return "the record has no holder (released, or cleared by hand)";
  if (!rec.is_held(now))
    return "the record expired";
  return "the record is held";
}

std::string_view to_string(backend_op x) noexcept {
  switch (x) {
    case backend_op::acquire:
      return "acquire";
    case backend_op::renew:
      return "renew";
    case backend_op::release:
      return "release";
  }
  return "unknown";
}

std::string_view to_string(backend_status x) noexcept {
  switch (x) {
    case backend_status::ok:
      return "ok";
    case backend_status::held:
      return "held";
    case backend_status::not_found:
      return "not_found";
    case backend_status::conflict:
      return "conflict";
    case backend_status::unavailable:
      return "unavailable";
    case backend_status::rejected:
      return "rejected";
  }
  return "unknown";
}

} // namespace troupe::lease
