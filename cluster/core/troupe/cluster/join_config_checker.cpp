#include "troupe/cluster/join_config_checker.hpp"

#include <fmt/format.h>

#include "troupe/cluster/protocol_version.hpp"
#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

const char* to_string(join_config_rule x) noexcept {
  switch (x) {
    case join_config_rule::must_equal:
      return "must_equal";
    case join_config_rule::ignore_if_missing:
      return "ignore_if_missing";
  }
  return "unknown";
}

std::string compat_result::describe(std::string_view here,
                                    std::string_view there) const {
  std::string result;
  for (const auto& m : mismatches) {
    if (!result.empty())
      result += "; ";
    switch (m.kind) {
      case mismatch_kind::different:
        result += fmt::format("{} is {:?} {} but {:?} {}", m.key, m.local_value,
                              here, m.remote_value, there);
        break;
      case mismatch_kind::missing_locally:
        result += fmt::format("{} is missing {} ({} {:?})", m.key, here, there,
                              m.remote_value);
        break;
      case mismatch_kind::missing_remotely:
        result += fmt::format("{} is missing {} ({} {:?})", m.key, there, here,
                              m.local_value);
        break;
    }
  }
  return result;
}

void join_config_checker::add(std::string key, join_config_rule rule) {
  TROUPE_ASSERT(!key.empty());
  auto inserted = rules_.emplace(std::move(key), rule).second;
  TROUPE_ASSERT(inserted);
}

compat_result join_config_checker::check(const join_config& local,
                                         const join_config& remote) const {
  compat_result result;
  for (const auto& [key, rule] : rules_) {
    auto l = local.find(key);
    auto r = remote.find(key);
    bool has_local = l != local.end();
    bool has_remote = r != remote.end();
    if (has_local && has_remote) {
      if (l->second != r->second)
        result.mismatches.push_back(
          {key, mismatch_kind::different, l->second, r->second});
      continue;
    }
    if (rule == join_config_rule::ignore_if_missing
        || (!has_local && !has_remote))
      continue;
    if (!has_local)
      result.mismatches.push_back(
        {key, mismatch_kind::missing_locally, "", r->second});
    else
      result.mismatches.push_back(
        {key, mismatch_kind::missing_remotely, l->second, ""});
  }
  return result;
}

join_config_checker default_join_config_checker() {
  join_config_checker result;
  result.add(std::string{protocol_major_key}, join_config_rule::must_equal);
  result.add(std::string{cluster_name_key}, join_config_rule::must_equal);
  return result;
}

compat_result check_join_compatibility(const join_config_checker& checker,
                                       const join_config& local,
                                       const join_config& remote) {
  return checker.check(local, remote);
}

join_config values_for_keys_of(const join_config& config,
                               const join_config& request) {
  join_config result;
  for (const auto& [key, value] : request)
    if (auto i = config.find(key); i != config.end())
      result.emplace(key, i->second);
  return result;
}

join_config join_config_of(const runtime::config& cfg) {
  auto result = cfg.join_checked_values();
  result.insert_or_assign(std::string{cluster_name_key},
                          cfg.get<std::string>("cluster.name"));
  result.insert_or_assign(std::string{protocol_major_key},
                          std::to_string(protocol_major));
  return result;
}

join_config_checker join_config_checker_of(const runtime::config& cfg) {
  auto result = default_join_config_checker();
  for (const auto& [key, value] : cfg.join_checked_values())
    if (result.rules().count(key) == 0)
      result.add(key, join_config_rule::ignore_if_missing);
  return result;
}

} // namespace troupe::cluster
