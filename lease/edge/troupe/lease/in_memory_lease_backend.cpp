#include "troupe/lease/in_memory_lease_backend.hpp"

#include <fmt/format.h>

namespace troupe::lease {

in_memory_lease_store::in_memory_lease_store(const runtime::clock_source& clock)
  : clock_(&clock) {}

backend_reply in_memory_lease_store::apply(backend_op op,
                                           const backend_request& req) {
  std::lock_guard guard{mtx_};
  auto& rec = records_[req.name];
  auto before = rec;
  auto now = clock_->now();
  auto reply = lease::apply(op, rec, req, now);
  reply.detail = "in-memory store";
  if (reply.status == backend_status::not_found)
    reply.detail += fmt::format(": {}", absence_of(before, now));
  return reply;
}

std::optional<lease_record>
in_memory_lease_store::record(const std::string& name) const {
  std::lock_guard guard{mtx_};
  auto i = records_.find(name);
  if (i == records_.end())
    return std::nullopt;
  return i->second;
}

void in_memory_lease_store::clear_holder(const std::string& name) {
  std::lock_guard guard{mtx_};
  auto& rec = records_[name];
  rec.holder.clear();
  rec.acquisition = 0;
  rec.expires_at = runtime::timestamp{};
}

in_memory_lease_backend::in_memory_lease_backend(
  std::shared_ptr<in_memory_lease_store> store)
  : store_(std::move(store)) {}

void in_memory_lease_backend::acquire(const backend_request& req,
                                      callback done) {
  done(store_->apply(backend_op::acquire, req));
}

void in_memory_lease_backend::renew(const backend_request& req, callback done) {
  done(store_->apply(backend_op::renew, req));
}

void in_memory_lease_backend::release(const backend_request& req,
                                      callback done) {
  done(store_->apply(backend_op::release, req));
}

std::string in_memory_lease_backend::describe() const {
  return "in-memory store";
}

} // namespace troupe::lease
