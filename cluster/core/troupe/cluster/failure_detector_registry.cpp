#include "troupe/cluster/failure_detector_registry.hpp"

namespace troupe::cluster {

failure_detector_registry::failure_detector_registry(phi_accrual_settings s)
  : settings_(s) {
  TROUPE_ASSERT(!validate(s));
}

void failure_detector_registry::heartbeat(const unique_address& node,
                                          timestamp now) {
  auto i = detectors_.find(node);
  if (i == detectors_.end())
    i = detectors_.emplace(node, phi_accrual_detector{settings_}).first;
  i->second.heartbeat(now);
}

bool failure_detector_registry::is_available(const unique_address& node,
                                             timestamp now) const {
  auto* detector = find(node);
  return detector == nullptr || detector->is_available(now);
}

bool failure_detector_registry::is_monitoring(
  const unique_address& node) const {
  auto* detector = find(node);
  return detector != nullptr && detector->is_monitoring();
}

double failure_detector_registry::phi(const unique_address& node,
                                      timestamp now) const {
  auto* detector = find(node);
  return detector != nullptr ? detector->phi(now) : 0.0;
}

void failure_detector_registry::remove(const unique_address& node) {
  detectors_.erase(node);
}

void failure_detector_registry::reset() {
  detectors_.clear();
}

const phi_accrual_detector*
failure_detector_registry::find(const unique_address& node) const {
  auto i = detectors_.find(node);
  return i != detectors_.end() ? &i->second : nullptr;
}

} // namespace troupe::cluster
