#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "troupe/lease/lease_backend.hpp"
#include "troupe/lease/lease_record.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The in-memory lease backend: a process-local store for tests and
/// development. Not distributed: two processes never see each other's
/// records (the seed's InMemoryLease).

namespace troupe::lease {

/// A process-local store of lease records, shared by every backend object
/// created over it. Expiry uses `clock`, the monotonic clock the store and
/// its holders share (the simulated clock in deterministic tests).
/// Thread-safe.
class in_memory_lease_store {
public:
  explicit in_memory_lease_store(const runtime::clock_source& clock);

  /// Applies one operation atomically (lease_record.hpp rules).
  backend_reply apply(backend_op op, const backend_request& req);

  /// The record of `name`, if one was ever written.
  std::optional<lease_record> record(const std::string& name) const;

  /// Deletes the holder of `name` behind its back (an operator's
  /// `kubectl delete lease`, used by tests). The token counter survives.
  /// The holder's next renewal answers `not_found` with the detail
  /// `in-memory store: the record has no holder (released, or cleared by
  /// hand)`: a loss; its next acquisition gets a greater token.
  void clear_holder(const std::string& name);

  const runtime::clock_source& clock() const noexcept {
    return *clock_;
  }

private:
  const runtime::clock_source* clock_;
  mutable std::mutex mtx_;
  std::map<std::string, lease_record> records_;
};

/// A lease_backend over an in_memory_lease_store. Replies synchronously,
/// inside the call. Thread-safe.
class in_memory_lease_backend final : public lease_backend {
public:
  explicit in_memory_lease_backend(
    std::shared_ptr<in_memory_lease_store> store);

  void acquire(const backend_request& req, callback done) override;
  void renew(const backend_request& req, callback done) override;
  void release(const backend_request& req, callback done) override;
  std::string describe() const override;

  const std::shared_ptr<in_memory_lease_store>& store() const noexcept {
    return store_;
  }

private:
  std::shared_ptr<in_memory_lease_store> store_;
};

} // namespace troupe::lease
