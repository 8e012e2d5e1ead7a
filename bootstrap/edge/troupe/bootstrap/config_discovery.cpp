#include "troupe/bootstrap/config_discovery.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::bootstrap {

config_discovery::config_discovery(std::vector<contact_point> points)
  : points_(std::move(points)) {
  std::sort(points_.begin(), points_.end());
  points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
}

void config_discovery::discover(runtime::timespan, callback done) {
  done(points_);
}

std::string config_discovery::describe() const {
  std::string list;
  for (const auto& p : points_) {
    if (!list.empty())
      list += ", ";
    list += to_string(p);
  }
  return fmt::format("the static list {} (cluster.bootstrap.config."
                     "contact_points)",
                     list.empty() ? "(empty)" : list);
}

} // namespace troupe::bootstrap
