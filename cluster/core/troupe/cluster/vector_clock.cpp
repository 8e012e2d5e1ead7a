#include "troupe/cluster/vector_clock.hpp"

namespace troupe::cluster {

const char* to_string(clock_order x) noexcept {
  switch (x) {
    case clock_order::same:
      return "same";
    case clock_order::before:
      return "before";
    case clock_order::after:
      return "after";
    case clock_order::concurrent:
      return "concurrent";
  }
  return "unknown";
}

void vector_clock::increment(const unique_address& node) {
  ++entries_[node];
}

void vector_clock::prune(const unique_address& node) {
  entries_.erase(node);
}

vector_clock::counter_type
vector_clock::counter(const unique_address& node) const noexcept {
  auto i = entries_.find(node);
  return i == entries_.end() ? 0 : i->second;
}

clock_order compare(const vector_clock& x, const vector_clock& y) {
  // One pass over both sorted maps; a key missing on one side counts as 0.
  bool x_higher = false;
  bool y_higher = false;
  auto i = x.entries().begin();
  auto j = y.entries().begin();
  auto i_end = x.entries().end();
  auto j_end = y.entries().end();
  while (i != i_end || j != j_end) {
    if (j == j_end || (i != i_end && i->first < j->first)) {
      x_higher = true;
      ++i;
    } else if (i == i_end || j->first < i->first) {
      y_higher = true;
      ++j;
    } else {
      x_higher = x_higher || i->second > j->second;
      y_higher = y_higher || j->second > i->second;
      ++i;
      ++j;
    }
    if (x_higher && y_higher)
      return clock_order::concurrent;
  }
  if (x_higher)
    return clock_order::after;
  return y_higher ? clock_order::before : clock_order::same;
}

vector_clock merge(const vector_clock& x, const vector_clock& y) {
  vector_clock result = x;
  for (const auto& [node, count] : y.entries_) {
    auto& mine = result.entries_[node];
    if (mine < count)
      mine = count;
  }
  return result;
}

std::string to_string(const vector_clock& x) {
  std::string result = "{";
  bool first = true;
  for (const auto& [node, count] : x.entries()) {
    if (!first)
      result += ", ";
    first = false;
    result += runtime::to_string(node);
    result += ": ";
    result += std::to_string(count);
  }
  result += '}';
  return result;
}

} // namespace troupe::cluster
