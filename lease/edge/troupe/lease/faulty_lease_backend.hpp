#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "troupe/lease/lease_backend.hpp"

/// @file
/// A scriptable, fault-injecting wrapper around any backend, for tests.

namespace troupe::lease {

/// One scripted behaviour for one backend call.
struct fault {
  enum class kind : uint8_t {
    /// Forward to the inner backend; reply normally.
    pass,
    /// Do not touch the inner backend; reply `reply` (e.g. a 503 or a 409).
    answer,
    /// Forward after `delay`, then reply.
    delay,
    /// Forward now; deliver the reply after `delay` (a slow response).
    delay_reply,
    /// Do not forward and never reply (a hung server; scenario L10).
    hang,
    /// Forward (the write takes effect), then drop the reply (scenario L3).
    lose_reply,
  };

  kind what = kind::pass;
  backend_reply reply;
  timespan delay{0};

  static fault pass() {
    return {};
  }

  static fault answer(backend_status status, std::string detail = {},
                      std::string holder = {}) {
    fault f;
    f.what = kind::answer;
    f.reply.status = status;
    f.reply.detail = std::move(detail);
    f.reply.holder = std::move(holder);
    return f;
  }

  static fault hang() {
    fault f;
    f.what = kind::hang;
    return f;
  }

  static fault lose_reply() {
    fault f;
    f.what = kind::lose_reply;
    return f;
  }

  static fault delayed(timespan d) {
    fault f;
    f.what = kind::delay;
    f.delay = d;
    return f;
  }

  static fault delayed_reply(timespan d) {
    fault f;
    f.what = kind::delay_reply;
    f.delay = d;
    return f;
  }
};

/// Wraps an inner backend and applies scripted faults per operation.
///
/// Per operation, scripted faults are consumed in order (`script`); when the
/// script is empty the `policy` decides (default: pass). Delays run through
/// the `scheduler` given at construction (in deterministic tests: the
/// simulated clock; see test/support), so a test never sleeps.
/// Thread-safe.
class faulty_lease_backend final : public lease_backend {
public:
  /// Runs `fn` after `d` (on any thread).
  using scheduler = std::function<void(timespan d, std::function<void()> fn)>;

  /// Chooses a fault for a call when the script is empty.
  using policy = std::function<fault(backend_op, const backend_request&)>;

  faulty_lease_backend(std::shared_ptr<lease_backend> inner,
                       scheduler sched = {});

  /// Appends `f` to the script of `op`.
  void script(backend_op op, fault f);

  /// Appends `n` copies of `f` to the script of `op`.
  void script(backend_op op, fault f, size_t n);

  /// Sets the fallback for calls with an empty script.
  void set_policy(policy p);

  /// Number of calls of `op` so far.
  size_t calls(backend_op op) const;

  void acquire(const backend_request& req, callback done) override;
  void renew(const backend_request& req, callback done) override;
  void release(const backend_request& req, callback done) override;
  std::string describe() const override;

private:
  void run(backend_op op, const backend_request& req, callback done);
  fault next(backend_op op, const backend_request& req);

  std::shared_ptr<lease_backend> inner_;
  scheduler sched_;
  mutable std::mutex mtx_;
  std::array<std::deque<fault>, 3> scripts_;
  std::array<size_t, 3> calls_{};
  policy policy_;
};

} // namespace troupe::lease
