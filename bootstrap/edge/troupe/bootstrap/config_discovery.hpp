#pragma once

#include <string>
#include <vector>

#include "troupe/bootstrap/contact_point_discovery.hpp"

/// @file
/// Discovery from a static list (`cluster.bootstrap.config.contact_points`),
/// Akka Discovery's `config` method: the same list on every node, every
/// node of the cluster in it. Answers inline, never fails.

namespace troupe::bootstrap {

/// A contact_point_discovery that always answers `points` (sorted, without
/// duplicates). Thread-safe (immutable after construction).
class config_discovery final : public contact_point_discovery {
public:
  explicit config_discovery(std::vector<contact_point> points);

  /// Calls `done` inline with the list.
  void discover(runtime::timespan timeout, callback done) override;

  /// `the static list a:1, b:2 (cluster.bootstrap.config.contact_points)`.
  std::string describe() const override;

private:
  std::vector<contact_point> points_;
};

} // namespace troupe::bootstrap
