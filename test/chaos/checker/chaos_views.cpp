// views.jsonl as the checker reads it (chaos_views.hpp).

#include "chaos_views.hpp"

#include <fmt/format.h>

#include "chaos_history.hpp"
#include "chaos_json_line.hpp"

namespace troupe::chaos {

namespace {

// The answer's fields (self, incarnation, members) into `r`; the fault,
// empty if none.
std::string read_answer(detail::json_line& j, view_record& r) {
  r.answered = true;
  j.get("self", r.self);
  j.get_optional("incarnation", r.incarnation);
  auto members = j.get_objects("members");
  for (size_t i = 0; i < members.size(); ++i) {
    auto& m = members[i];
    listed_member x;
    m.get("address", x.address);
    m.get("status", x.status);
    m.get("reachable", x.reachable);
    if (!m.fault().empty())
      return fmt::format("members[{}]: {}", i, m.fault());
    r.members.push_back(std::move(x));
  }
  return j.fault();
}

// One line into `r`; the fault, empty if none.
std::string read_record(std::string_view text, view_record& r) {
  detail::json_line j{text};
  j.get_stamp("mono_ns", r.mono_ns);
  j.get_stamp("sent_ns", r.sent_ns);
  j.get("round", r.round);
  j.get("final", r.final);
  j.get("node", r.node);
  j.get("pid", r.pid);
  j.get("start", r.start);
  if (!j.fault().empty())
    return j.fault();
  if (r.sent_ns > r.mono_ns)
    return fmt::format("sent_ns {} is after mono_ns {}", r.sent_ns, r.mono_ns);
  if (!j.has("error"))
    return read_answer(j, r);
  j.get("error", r.error);
  return j.fault();
}

} // namespace

std::set<std::string> view_record::cluster() const {
  std::set<std::string> out;
  for (auto& m : members)
    if (m.status != "down" && m.status != "removed")
      out.insert(m.address);
  return out;
}

bool view_record::in_cluster() const {
  return answered && cluster().contains(self);
}

std::map<std::string, listed_member> view_record::by_address() const {
  std::map<std::string, listed_member> out;
  for (auto& m : members)
    out.emplace(m.address, m);
  return out;
}

std::vector<view_record> parse_views(std::string_view text,
                                     std::vector<std::string>& problems) {
  std::vector<view_record> out;
  for (auto& l : detail::lines_of(text)) {
    view_record r;
    r.line = l.number;
    auto fault = read_record(l.text, r);
    if (fault.empty())
      out.push_back(std::move(r));
    else
      problems.push_back(fmt::format("{} line {}: {}", file_names::views,
                                     l.number, printable(fault)));
  }
  return out;
}

} // namespace troupe::chaos
