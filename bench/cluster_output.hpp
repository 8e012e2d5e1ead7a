#pragma once

#include <cstddef>
#include <regex>
#include <set>
#include <string>

/// @file
/// Reading a cluster_node's printed lines (test/cluster/cluster_node.cpp)
/// in the benchmarks that run real processes.

namespace troupe::bench {

/// The distinct members a node has printed `event member_up` for.
inline size_t members_up(const std::string& text) {
  static const std::regex line{"event member_up (\\S+)"};
  std::set<std::string> up;
  for (std::sregex_iterator i{text.begin(), text.end(), line}, end; i != end;
       ++i)
    up.insert((*i)[1]);
  return up.size();
}

/// How often `what` occurs in `text`.
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + 1))
    ++n;
  return n;
}

} // namespace troupe::bench
