#pragma once

// A compact notation for membership test tables.
//
// Nodes are single letters: node('a') is "a:2552#1" (address order is
// letter order). A member list is a space-separated list of
// `<letter>:<status>[:<up_number>[:<role>,<role>...]]`, e.g.
// "a:up:1 b:joining c:leaving:2:web,api" (up_number "-" means none); a
// member's app_version follows '@' at the end ("a:up:1@2.0", "b:up:2:web@2";
// none: 0.0.0).
// Reachability is a list of `<observer>><subject>` (unreachable) or
// `<observer>!<subject>` (terminated), e.g. "a>b c!b". Node sets are
// written as letters: "abc".

#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/gossip.hpp"

namespace membership_test {

using troupe::cluster::gossip;
using troupe::cluster::member;
using troupe::cluster::member_status;
using troupe::cluster::unique_address;

inline unique_address node(char name) {
  return unique_address{std::string(1, name), 2552, 1};
}

inline std::set<unique_address> nodes(std::string_view names) {
  std::set<unique_address> result;
  for (char c : names)
    if (c != ' ')
      result.insert(node(c));
  return result;
}

inline std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> result;
  std::string item;
  std::istringstream in{std::string{text}};
  while (std::getline(in, item, sep))
    if (!item.empty())
      result.push_back(item);
  return result;
}

/// Parses one `<letter>:<status>[:<up_number>[:<roles>]][@<app_version>]`.
inline member parse_member(const std::string& spec_and_version) {
  auto at = spec_and_version.find('@');
  auto spec = spec_and_version.substr(0, at);
  member m;
  if (at != std::string::npos)
    m.app_version
      = *troupe::cluster::parse_app_version(spec_and_version.substr(at + 1));
  auto parts = split(spec, ':');
  m.address = node(parts.at(0).at(0));
  m.status = *troupe::cluster::parse_member_status(parts.at(1));
  if (parts.size() > 2 && parts[2] != "-")
    m.up_number = std::stoi(parts[2]);
  if (parts.size() > 3)
    m.roles = troupe::cluster::normalize_roles(split(parts[3], ','));
  return m;
}

inline std::vector<member> members(std::string_view specs) {
  std::vector<member> result;
  for (const auto& spec : split(specs, ' '))
    result.push_back(parse_member(spec));
  return result;
}

/// Applies "a>b c!d" to `g`'s reachability.
inline void observe(gossip& g, std::string_view observations) {
  for (const auto& obs : split(observations, ' ')) {
    auto observer = node(obs.at(0));
    auto subject = node(obs.at(2));
    if (obs.at(1) == '!')
      g.reachability().terminated(observer, subject);
    else
      g.reachability().unreachable(observer, subject);
  }
}

/// A gossip with `member_specs`, seen by `seen`, with `observations`.
inline gossip make_gossip(std::string_view member_specs,
                          std::string_view seen = "",
                          std::string_view observations = "") {
  gossip g{members(member_specs)};
  for (const auto& n : nodes(seen))
    g.seen(n);
  observe(g, observations);
  return g;
}

/// Renders the members of `g` in the notation above, without roles:
/// "a:up:1 b:joining".
inline std::string member_specs(const gossip& g) {
  std::string result;
  for (const auto& m : g.members()) {
    if (!result.empty())
      result += ' ';
    result += m.address.host + ':' + to_string(m.status);
    if (m.up_number != member::no_up_number)
      result += ':' + std::to_string(m.up_number);
    if (m.app_version != troupe::cluster::app_version{})
      result += '@' + to_string(m.app_version);
  }
  return result;
}

/// Renders a node set as letters ("abc").
inline std::string letters(const std::set<unique_address>& xs) {
  std::string result;
  for (const auto& x : xs)
    result += x.host;
  return result;
}

/// Renders an optional node as its letter, or "-".
inline std::string letter(const std::optional<unique_address>& x) {
  return x ? x->host : std::string{"-"};
}

} // namespace membership_test
