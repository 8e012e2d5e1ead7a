#include "troupe/lease/lease_handle.hpp"

#include <algorithm>
#include <random>

#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_shared.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/monotonic_clock.hpp"

namespace troupe::lease {

lost_subscription::lost_subscription(std::weak_ptr<detail::lease_shared> shared,
                                     uint64_t id)
  : shared_(std::move(shared)), id_(id) {}

void lost_subscription::unsubscribe() {
  if (auto sh = shared_.lock()) {
    std::lock_guard guard{sh->mtx};
    sh->listeners.erase(id_);
  }
  shared_.reset();
}

namespace {

// check_alive() reads the coarse monotonic clock in production and the
// simulated clock under CAF's deterministic test coordinator.
std::shared_ptr<detail::lease_shared>
make_shared_state(caf::actor_system& sys) {
  if (dynamic_cast<caf::scheduler::test_coordinator*>(&sys.scheduler())) {
    struct owning final : detail::lease_shared {
      explicit owning(caf::actor_system& sys)
        : detail::lease_shared(clock_), clock_(sys.clock()) {}
      runtime::caf_clock_source clock_;
    };
    return std::make_shared<owning>(sys);
  }
  return std::make_shared<detail::lease_shared>(
    runtime::default_coarse_clock());
}

} // namespace

caf::expected<lease_handle>
lease_handle::spawn(caf::actor_system& sys, lease_settings settings,
                    std::shared_ptr<lease_backend> backend) {
  settings = settings.with_defaults();
  if (auto err = validate(settings))
    return runtime::to_caf_error(err);
  if (auto err = backend->validate(settings))
    return runtime::to_caf_error(err);
  lease_handle result;
  result.sys_ = &sys;
  result.settings_ = settings;
  result.shared_ = make_shared_state(sys);
  std::random_device rd;
  uint64_t seed = (uint64_t{rd()} << 32) ^ rd();
  result.actor_ = spawn_lease_actor(sys, settings, std::move(backend),
                                    result.shared_, seed);
  return result;
}

caf::expected<lease_handle>
lease_handle::spawn(runtime::node& node, lease_settings settings,
                    std::shared_ptr<lease_backend> backend,
                    runtime::timespan release_timeout) {
  auto result = spawn(node.system(), std::move(settings), std::move(backend));
  if (!result)
    return result;
  auto handle = *result;
  node.add_shutdown_task(
    runtime::shutdown_phase::release_leases,
    "release lease \"" + handle.settings().name + "\"",
    [handle, release_timeout](const runtime::shutdown_context& ctx) mutable {
      auto budget = std::min(release_timeout, ctx.remaining());
      if (auto err = handle.release(budget))
        runtime::logger{"lease"}.warning(
          "release of \"{}\" on shutdown failed: {}", handle.settings().name,
          runtime::error_message(err));
    });
  node.stop_on_shutdown(caf::actor_cast<caf::strong_actor_ptr>(handle.actor_));
  return result;
}

caf::expected<lease_handle> lease_handle::spawn_from_config(runtime::node& node,
                                                            std::string name,
                                                            std::string owner) {
  auto backend = backend_from_config(node.cfg(), node.clock());
  if (!backend)
    return runtime::to_caf_error(backend.error());
  return spawn(
    node, settings_from_config(node.cfg(), std::move(name), std::move(owner)),
    std::move(*backend));
}

caf::expected<bool> lease_handle::acquire(runtime::timespan timeout) {
  caf::scoped_actor self{*sys_};
  caf::expected<bool> result{false};
  // The actor answers within `timeout`; the extra second covers scheduling.
  self
    ->request(actor_, timeout + std::chrono::seconds{1}, acquire_atom::value,
              timeout)
    .receive([&](const acquire_result& r) { result = r.acquired; },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

caf::error lease_handle::release(runtime::timespan timeout) {
  caf::scoped_actor self{*sys_};
  caf::error result;
  self->request(actor_, timeout, release_atom::value)
    .receive([](bool) {}, [&](caf::error& err) { result = std::move(err); });
  return result;
}

bool lease_handle::check_alive() const noexcept {
  return shared_ && shared_->check_alive();
}

uint64_t lease_handle::token() const noexcept {
  return shared_ ? shared_->token.load(std::memory_order_acquire) : 0;
}

uint64_t lease_handle::acquisitions() const noexcept {
  return shared_ ? shared_->acquisitions.load(std::memory_order_relaxed) : 0;
}

uint64_t lease_handle::losses() const noexcept {
  return shared_ ? shared_->losses.load(std::memory_order_relaxed) : 0;
}

lost_subscription
lease_handle::on_lost(std::function<void(const lease_lost&)> handler) {
  if (!shared_)
    return {};
  std::lock_guard guard{shared_->mtx};
  auto id = ++shared_->next_listener;
  shared_->listeners.emplace(id, std::move(handler));
  return lost_subscription{shared_, id};
}

void lease_handle::subscribe(const caf::actor& subscriber) const {
  caf::anon_send(actor_, subscribe_atom::value, subscriber);
}

void lease_handle::unsubscribe(const caf::actor& subscriber) const {
  caf::anon_send(actor_, unsubscribe_atom::value, subscriber);
}

} // namespace troupe::lease
