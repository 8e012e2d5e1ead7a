#include "client/node_choice.hpp"

#include <algorithm>

namespace troupe::demo::client {

node_choice::node_choice(size_t nodes, duration pause)
  : pause_(pause),
    refusing_until_(std::max<size_t>(nodes, 1), duration::min()) {}

size_t node_choice::from_on(size_t from, duration now) const {
  auto n = refusing_until_.size();
  for (size_t i = 0; i < n; ++i)
    if (!is_refusing((from + i) % n, now))
      return (from + i) % n;
  return from % n;
}

size_t node_choice::first(uint64_t n, duration now) const {
  return from_on(static_cast<size_t>(n % refusing_until_.size()), now);
}

size_t node_choice::next(size_t previous, duration now) const {
  return from_on(previous + 1, now);
}

bool node_choice::is_refusing(size_t node, duration now) const {
  return now < refusing_until_[node];
}

bool node_choice::all_refusing(duration now) const {
  return std::all_of(refusing_until_.begin(), refusing_until_.end(),
                     [now](duration until) { return now < until; });
}

bool node_choice::waits_before(size_t next_node, bool previous_refused,
                               duration now) const {
  return !previous_refused || is_refusing(next_node, now);
}

void node_choice::on_refused(size_t node, duration now) {
  refusing_until_[node] = now + pause_;
}

void node_choice::on_answered(size_t node) {
  refusing_until_[node] = duration::min();
}

} // namespace troupe::demo::client
