#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "partition_notation.hpp"
#include "troupe/downing/strategy.hpp"

/// One row of a decision table: the partition in Akka's notation, the node
/// whose view it is, extra unreachability records ("b->c"), the expected
/// decision and the nodes it downs (lease decisions: when acquired).
struct decision_row {
  std::string partition;
  std::string self;
  std::string extra;
  troupe::downing::decision_kind kind;
  std::string down;
};

/// Runs every row against `s`, each in a section named after the row.
inline void check_rows(const troupe::downing::strategy& s,
                       const std::vector<decision_row>& rows) {
  using namespace troupe::downing;
  for (const auto& row : rows) {
    DYNAMIC_SECTION(name_of(s)
                    << ": " << row.partition << " as " << row.self
                    << (row.extra.empty() ? "" : " + ") << row.extra << " => "
                    << to_string(row.kind) << " " << row.down) {
      auto view = test::view_of(row.partition, row.self, row.extra);
      auto d = decide(s, view);
      CHECK(to_string(d.kind) == std::string{to_string(row.kind)});
      CHECK(test::names(nodes_to_down(s, d, view)) == row.down);
    }
  }
}
