#include "troupe/cluster/cluster_incarnation.hpp"

#include <ctime>

#include <fmt/format.h>

namespace troupe::cluster {

cluster_incarnation found_incarnation(uint64_t random, wall_time now) noexcept {
  return cluster_incarnation{random != 0 ? random : 1, now};
}

std::string format_wall_time(wall_time t) {
  auto ms = t.time_since_epoch().count();
  auto secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  auto rest = ms - static_cast<int64_t>(secs) * 1000;
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                     utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, rest);
}

std::string to_string(const cluster_incarnation& x) {
  if (!x.is_set())
    return "none";
  return fmt::format("{:016x}@{}", x.id, format_wall_time(x.founded_at));
}

} // namespace troupe::cluster
