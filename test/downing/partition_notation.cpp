#include "partition_notation.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace troupe::downing::test {

namespace {

std::string_view trim(std::string_view x) {
  while (!x.empty() && x.front() == ' ')
    x.remove_prefix(1);
  while (!x.empty() && x.back() == ' ')
    x.remove_suffix(1);
  return x;
}

std::vector<std::string_view> split(std::string_view x, char sep) {
  std::vector<std::string_view> result;
  size_t start = 0;
  for (size_t i = 0; i <= x.size(); ++i)
    if (i == x.size() || x[i] == sep) {
      auto part = trim(x.substr(start, i - start));
      if (!part.empty())
        result.push_back(part);
      start = i + 1;
    }
  return result;
}

std::string_view strip_braces(std::string_view x) {
  x = trim(x);
  if (!x.empty() && x.front() == '{') {
    if (x.back() != '}')
      throw std::invalid_argument("unbalanced braces in " + std::string{x});
    x = x.substr(1, x.size() - 2);
  }
  return x;
}

struct parsed_node {
  member m;
  bool explicit_up_number = false;
};

parsed_node parse_node(std::string_view text) {
  parsed_node result;
  auto caret = text.find('^');
  if (caret != std::string_view::npos) {
    result.m.up_number = std::stoi(std::string{text.substr(caret + 1)});
    result.explicit_up_number = true;
    text = text.substr(0, caret);
  }
  result.m.status = member_status::up;
  auto slash = text.find('/');
  if (slash != std::string_view::npos) {
    auto status = cluster::parse_member_status(text.substr(slash + 1));
    if (!status)
      throw std::invalid_argument(status.error().message);
    result.m.status = *status;
    text = text.substr(0, slash);
  }
  auto parts = split(text, ':');
  if (parts.empty())
    throw std::invalid_argument("empty node name");
  result.m.address = node(parts.front());
  std::vector<std::string> roles(parts.begin() + 1, parts.end());
  result.m.roles = cluster::normalize_roles(std::move(roles));
  return result;
}

} // namespace

runtime::unique_address node(std::string_view name) {
  return runtime::unique_address{std::string{name}, 2552, 1};
}

std::set<runtime::unique_address> nodes(std::string_view text) {
  std::set<runtime::unique_address> result;
  for (auto name : split(strip_braces(text), ','))
    result.insert(node(name));
  return result;
}

std::string names(const std::set<runtime::unique_address>& nodes) {
  std::string result = "{";
  for (const auto& x : nodes) {
    if (result.size() > 1)
      result += ",";
    result += x.host;
  }
  return result + "}";
}

downing_view view_of(std::string_view notation, std::string_view self,
                     std::string_view extra_records, std::string_view seen_by) {
  std::vector<std::vector<parsed_node>> sides;
  for (auto side : split(notation, '|')) {
    sides.emplace_back();
    for (auto text : split(strip_braces(side), ','))
      sides.back().push_back(parse_node(text));
  }
  std::vector<member> members;
  for (const auto& side : sides)
    for (const auto& x : side)
      members.push_back(x.m);
  // Default ages: name order (a oldest); joining and weakly_up never up.
  std::sort(members.begin(), members.end(), cluster::by_address{});
  int32_t rank = 0;
  for (auto& m : members) {
    ++rank;
    bool explicit_age = false;
    for (const auto& side : sides)
      for (const auto& x : side)
        if (x.m.address == m.address)
          explicit_age = x.explicit_up_number;
    if (explicit_age)
      continue;
    if (m.status == member_status::joining
        || m.status == member_status::weakly_up)
      m.up_number = member::no_up_number;
    else
      m.up_number = rank;
  }
  auto self_address = node(self);
  auto self_side = std::find_if(sides.begin(), sides.end(), [&](auto& side) {
    return std::any_of(side.begin(), side.end(),
                       [&](auto& x) { return x.m.address == self_address; });
  });
  if (self_side == sides.end())
    throw std::invalid_argument("self is not in " + std::string{notation});
  std::vector<cluster::reachability_record> records;
  auto add = [&records](const runtime::unique_address& observer,
                        const runtime::unique_address& subject) {
    records.push_back(cluster::reachability_record{
      observer, subject, cluster::reachability_status::unreachable, 1});
  };
  for (const auto& observer : *self_side)
    for (auto other = sides.begin(); other != sides.end(); ++other)
      if (other != self_side)
        for (const auto& subject : *other)
          add(observer.m.address, subject.m.address);
  for (auto edge : split(extra_records, ',')) {
    auto arrow = edge.find("->");
    if (arrow == std::string_view::npos)
      throw std::invalid_argument("bad record " + std::string{edge});
    add(node(trim(edge.substr(0, arrow))), node(trim(edge.substr(arrow + 2))));
  }
  return downing_view{self_address, std::move(members), records,
                      nodes(seen_by)};
}

} // namespace troupe::downing::test
