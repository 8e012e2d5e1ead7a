#include "troupe/lease/faulty_lease_backend.hpp"

#include "troupe/runtime/assert.hpp"

namespace troupe::lease {

faulty_lease_backend::faulty_lease_backend(std::shared_ptr<lease_backend> inner,
                                           scheduler sched)
  : inner_(std::move(inner)), sched_(std::move(sched)) {
  TROUPE_ASSERT(inner_ != nullptr);
}

void faulty_lease_backend::script(backend_op op, fault f) {
  std::lock_guard guard{mtx_};
  scripts_[static_cast<size_t>(op)].push_back(std::move(f));
}

void faulty_lease_backend::script(backend_op op, fault f, size_t n) {
  for (size_t i = 0; i < n; ++i)
    script(op, f);
}

void faulty_lease_backend::set_policy(policy p) {
  std::lock_guard guard{mtx_};
  policy_ = std::move(p);
}

size_t faulty_lease_backend::calls(backend_op op) const {
  std::lock_guard guard{mtx_};
  return calls_[static_cast<size_t>(op)];
}

fault faulty_lease_backend::next(backend_op op, const backend_request& req) {
  policy p;
  {
    std::lock_guard guard{mtx_};
    auto idx = static_cast<size_t>(op);
    ++calls_[idx];
    auto& q = scripts_[idx];
    if (!q.empty()) {
      auto f = std::move(q.front());
      q.pop_front();
      return f;
    }
    p = policy_;
  }
  return p ? p(op, req) : fault::pass();
}

void faulty_lease_backend::run(backend_op op, const backend_request& req,
                               callback done) {
  auto f = next(op, req);
  switch (f.what) {
    case fault::kind::pass:
      inner_->call(op, req, std::move(done));
      return;
    case fault::kind::answer:
      if (f.reply.detail.empty())
        f.reply.detail = "injected fault";
      done(std::move(f.reply));
      return;
    case fault::kind::hang:
      return;
    case fault::kind::lose_reply:
      inner_->call(op, req, [](backend_reply) {});
      return;
    case fault::kind::delay:
      TROUPE_ASSERT(sched_ != nullptr);
      sched_(f.delay,
             [inner = inner_, op, req, done = std::move(done)]() mutable {
               inner->call(op, req, std::move(done));
             });
      return;
    case fault::kind::delay_reply:
      TROUPE_ASSERT(sched_ != nullptr);
      inner_->call(
        op, req,
        [sched = sched_, d = f.delay, done = std::move(done)](backend_reply r) {
          sched(d, [done, r = std::move(r)]() mutable { done(std::move(r)); });
        });
      return;
  }
}

void faulty_lease_backend::acquire(const backend_request& req, callback done) {
  run(backend_op::acquire, req, std::move(done));
}

void faulty_lease_backend::renew(const backend_request& req, callback done) {
  run(backend_op::renew, req, std::move(done));
}

void faulty_lease_backend::release(const backend_request& req, callback done) {
  run(backend_op::release, req, std::move(done));
}

std::string faulty_lease_backend::describe() const {
  return "faulty(" + inner_->describe() + ")";
}

} // namespace troupe::lease
