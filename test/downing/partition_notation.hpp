#pragma once

#include <set>
#include <string>
#include <string_view>

#include "troupe/downing/downing_view.hpp"

/// @file
/// Akka's partition notation for resolver tests.
///
/// `"{a,b,c} | {d,e}"`: sides separated by `|`. A node is
/// `name[:role]...[/status][^up_number]`, e.g. `a:seed`, `d/joining`,
/// `c/leaving^1`. Names map to addresses `name:2552#1`, so address order is
/// name order. Status defaults to up; up_number defaults to the name's rank
/// in name order (a is oldest), none for joining/weakly_up.
///
/// `view_of(notation, self, extra)`: the view of `self`, whose side
/// observes every node of the other sides as unreachable (a clean
/// partition seen from self's side), plus the `extra` records
/// `"b->c, c->a"` (observer -> subject, unreachable). Bad notation throws
/// std::invalid_argument (test code only).

namespace troupe::downing::test {

/// The address of the node `name`.
runtime::unique_address node(std::string_view name);

/// `"{a,b}"` -> the set of those nodes (also without braces).
std::set<runtime::unique_address> nodes(std::string_view names);

/// The set as `{a,b}` (names only), for readable assertions.
std::string names(const std::set<runtime::unique_address>& nodes);

/// See the file comment.
downing_view view_of(std::string_view notation, std::string_view self,
                     std::string_view extra_records = {},
                     std::string_view seen_by = {});

} // namespace troupe::downing::test
