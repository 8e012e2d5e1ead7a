// The chaos run's files as typed events (chaos_history.hpp).

#include "chaos_history.hpp"

#include <charconv>

#include <fmt/format.h>

#include "chaos_json_line.hpp"

namespace troupe::chaos {

namespace {

using namespace detail;

using node_kind = kind_spec<node_event_kind, node_event>;
using nemesis_kind = kind_spec<nemesis_op, nemesis_event>;

// Each history event's own fields, in the order of chaos-spec.md.
const std::vector<node_kind>& node_kinds() {
  using k = node_event_kind;
  using e = node_event;
  static const std::vector<node_kind> table{
    {"node_started", k::node_started, {}},
    {"lease_acquired",
     k::lease_acquired,
     {{"lease", &e::lease}, {"token", &e::token}}},
    {"lease_lost",
     k::lease_lost,
     {{"lease", &e::lease}, {"token", &e::token}, {"reason", &e::reason}}},
    {"lease_released",
     k::lease_released,
     {{"lease", &e::lease}, {"token", &e::token}}},
    {"singleton_started",
     k::singleton_started,
     {{"type", &e::type},
      {"incarnation", &e::incarnation},
      {"token", &e::token}}},
    {"singleton_stopped",
     k::singleton_stopped,
     {{"type", &e::type},
      {"incarnation", &e::incarnation},
      {"token", &e::token}}},
    {"ledger_write",
     k::ledger_write,
     {{"incarnation", &e::incarnation},
      {"token", &e::token},
      {"seq", &e::seq}}},
    {"entity_started",
     k::entity_started,
     {{"account", &e::account},
      {"shard", &e::shard},
      {"incarnation", &e::incarnation}}},
    {"entity_stopped",
     k::entity_stopped,
     {{"account", &e::account},
      {"shard", &e::shard},
      {"incarnation", &e::incarnation}}},
    {"deposit_write",
     k::deposit_write,
     {{"account", &e::account},
      {"shard", &e::shard},
      {"incarnation", &e::incarnation},
      {"deposit", &e::deposit},
      {"expected_seq", &e::expected_seq}}},
  };
  return table;
}

// Each nemesis op's own fields (run_start's `settings` is not read).
const std::vector<nemesis_kind>& nemesis_kinds() {
  using o = nemesis_op;
  using e = nemesis_event;
  static const std::vector<nemesis_kind> table{
    {"run_start",
     o::run_start,
     {{"seed", &e::seed},
      {"nodes", &e::nodes},
      {"mechanism", &e::mechanism},
      {"duration_s", &e::duration_s},
      {"quiet_after_ms", &e::quiet_after_ms}}},
    {"node_start",
     o::node_start,
     {{"node", &e::node}, {"pid", &e::pid}, {"start", &e::start}}},
    {"kill", o::kill, {{"node", &e::node}, {"pid", &e::pid}}},
    {"node_exit",
     o::node_exit,
     {{"node", &e::node}, {"pid", &e::pid}, {"status", &e::status}}},
    {"pause", o::pause, {{"node", &e::node}, {"pid", &e::pid}}},
    {"resume", o::resume, {{"node", &e::node}, {"pid", &e::pid}}},
    {"partition",
     o::partition,
     {{"id", &e::id},
      {"kind", &e::direction},
      {"from", &e::from},
      {"to", &e::to},
      {"mechanism", &e::mechanism}}},
    {"heal", o::heal, {{"id", &e::id}}},
    {"etcd_stop", o::etcd_stop, {}},
    {"etcd_start", o::etcd_start, {}},
    {"etcd_slow", o::etcd_slow, {{"delay_ms", &e::delay_ms}}},
    {"etcd_fast", o::etcd_fast, {}},
    {"lease_delete", o::lease_delete, {{"key", &e::key}}},
    {"nemesis_start", o::nemesis_start, {}},
    {"nemesis_end", o::nemesis_end, {}},
    {"probe_start", o::probe_start, {}},
    {"run_end", o::run_end, {}},
    {"store_exit", o::store_exit, {{"status", &e::status}}},
    {"majority_restart", o::majority_restart, {{"nodes", &e::nodes_list}}},
    {"links_slow",
     o::links_slow,
     {{"node", &e::node},
      {"delay_ms", &e::delay_ms},
      {"mechanism", &e::mechanism}}},
    {"links_fast", o::links_fast, {{"node", &e::node}}},
  };
  return table;
}

template <class Kind, class Event>
const char* name_of(const std::vector<kind_spec<Kind, Event>>& table,
                    Kind kind) noexcept {
  auto* k = find_kind(table, kind);
  return k != nullptr ? k->name : "unknown";
}

void add_problem(std::vector<std::string>& problems, std::string_view file,
                 size_t line, std::string_view fault) {
  problems.push_back(fmt::format("{} line {}: {}", file, line, fault));
}

// Splits `<node>.<start>.jsonl`; false for another shape.
bool split_history_name(std::string_view name, history_file& out) {
  constexpr std::string_view ext = ".jsonl";
  if (!name.ends_with(ext))
    return false;
  auto stem = name.substr(0, name.size() - ext.size());
  auto dot = stem.rfind('.');
  if (dot == std::string_view::npos || dot == 0)
    return false;
  auto digits = stem.substr(dot + 1);
  auto [end, ec]
    = std::from_chars(digits.data(), digits.data() + digits.size(), out.start);
  if (ec != std::errc{} || end != digits.data() + digits.size()
      || digits.empty())
    return false;
  out.node = std::string{stem.substr(0, dot)};
  return true;
}

// Reads one history line into `e`; returns the fault, empty if none.
std::string read_node_event(json_line& j, const history_file& f,
                            node_event& e) {
  j.get_stamp("mono_ns", e.mono_ns);
  j.get("node", e.node);
  j.get("address", e.address);
  auto fault = read_kind(j, "event", node_kinds(), &node_event::kind, e);
  if (!fault.empty())
    return fault;
  if (e.node != f.node)
    return fmt::format("node \"{}\" in a file of {}", printable(e.node),
                       printable(f.node));
  if (!f.address.empty() && e.address != f.address)
    return fmt::format("address {} after {} in the same file",
                       printable(e.address), printable(f.address));
  return {};
}

// The length of the valid UTF-8 sequence of two or more bytes at the start
// of `s` (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF); 0
// if there is none.
size_t utf8_sequence(std::string_view s) noexcept {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto c = byte(0);
  size_t n = c >= 0xc2 && c <= 0xdf   ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || s.size() < n)
    return 0;
  // The second byte's range narrows after E0, ED, F0 and F4.
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (byte(1) < lo || byte(1) > hi)
    return 0;
  for (size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf)
      return 0;
  return n;
}

// The stamp problem of a demo file's record, as json_line words it.
template <class Records, class Stamp>
void drop_unstamped(Records& xs, std::string_view file, Stamp stamp,
                    std::vector<std::string>& problems) {
  std::erase_if(xs, [&](auto& x) {
    if (stamp(x) > 0)
      return false;
    add_problem(problems, file, x.line, stamp_fault("mono_ns", stamp(x)));
    return true;
  });
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&](char c) {
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  };
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      auto n = utf8_sequence(text.substr(i));
      // U+0080-U+009F (C2 80-9F) are C1 controls: a terminal may obey them.
      auto c1
        = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
      if (n == 0 || c1) {
        hex(text[i]);
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          hex(text[i]);
        else
          out += text[i];
    }
    ++i;
  }
  return out;
}

const char* to_string(node_event_kind x) noexcept {
  return name_of(node_kinds(), x);
}

const char* to_string(nemesis_op x) noexcept {
  return name_of(nemesis_kinds(), x);
}

std::string describe(const node_event& x) {
  return describe_kind(node_kinds(), x.kind, x);
}

std::string describe(const nemesis_event& x) {
  return describe_kind(nemesis_kinds(), x.op, x);
}

std::string history_file::path() const {
  return fmt::format("{}{}", file_names::history_dir, printable(name));
}

event_ref history_file::ref(const node_event& e) const {
  return {path(), e.line, e.mono_ns};
}

history_file parse_history_file(std::string_view name, std::string_view text,
                                std::vector<std::string>& problems) {
  history_file f;
  f.name = std::string{name};
  if (!split_history_name(name, f)) {
    problems.push_back(
      fmt::format("{}: the name is not <node>.<start>.jsonl", f.path()));
    return f;
  }
  auto path = f.path();
  for (auto& l : lines_of(text)) {
    node_event e;
    e.line = l.number;
    json_line j{l.text};
    // Only a line that is not JSON can be a write cut short.
    auto cut = l.unterminated_last && !j.fault().empty();
    auto fault = read_node_event(j, f, e);
    if (fault.empty()) {
      if (f.events.empty() && e.kind != node_event_kind::node_started)
        add_problem(problems, path, l.number,
                    fmt::format("the first event is {}, not node_started",
                                to_string(e.kind)));
      f.address = e.address;
      f.events.push_back(std::move(e));
    } else if (cut) {
      // The process died while writing its last line.
      f.cut_last_line = true;
    } else {
      add_problem(problems, path, l.number, fault);
    }
  }
  return f;
}

std::vector<nemesis_event> parse_nemesis(std::string_view text,
                                         std::vector<std::string>& problems) {
  std::vector<nemesis_event> out;
  for (auto& l : lines_of(text)) {
    nemesis_event e;
    e.line = l.number;
    json_line j{l.text};
    j.get_stamp("mono_ns", e.mono_ns);
    auto fault = read_kind(j, "op", nemesis_kinds(), &nemesis_event::op, e);
    if (fault.empty())
      out.push_back(std::move(e));
    else
      add_problem(problems, file_names::nemesis, l.number, fault);
  }
  return out;
}

std::map<size_t, std::string>
parse_journal_writers(std::string_view text,
                      std::vector<std::string>& problems) {
  std::map<size_t, std::string> out;
  for (auto& l : lines_of(text)) {
    json_line j{l.text};
    if (!j.fault().empty())
      continue;
    std::string writer;
    if (j.get_optional("writer", writer))
      out.emplace(l.number, std::move(writer));
    else if (!j.fault().empty())
      add_problem(problems, file_names::journal, l.number, j.fault());
  }
  return out;
}

size_t chaos_history::cut_lines() const noexcept {
  size_t n = 0;
  for (auto& f : files)
    n += f.cut_last_line ? 1 : 0;
  return n;
}

chaos_history parse_run(const chaos_input& in) {
  chaos_history h;
  for (auto& [name, text] : in.history)
    h.files.push_back(parse_history_file(name, text, h.problems));
  h.nemesis = parse_nemesis(in.nemesis_jsonl, h.problems);
  h.journal_writers = parse_journal_writers(in.journal_jsonl, h.problems);
  h.views = parse_views(in.views_jsonl, h.problems);
  for (auto& l : lines_of(in.client_log))
    if (auto e = demo::client::parse_client_event(l.text))
      h.client.push_back({l.number, std::move(*e)});
  // The demo verdict reports these files' malformed lines.
  std::vector<std::string> reported_by_verdict;
  h.ledger = demo::verdict::parse_ledger(in.ledger_jsonl, reported_by_verdict);
  h.journal
    = demo::verdict::parse_journal(in.journal_jsonl, reported_by_verdict);
  // The demo verdict takes any int64 stamp; here one must be a
  // CLOCK_MONOTONIC reading.
  drop_unstamped(
    h.client, file_names::client, [](auto& r) { return r.event.mono_ns; },
    h.store_problems);
  drop_unstamped(
    h.ledger, file_names::ledger, [](auto& e) { return e.mono_ns; },
    h.store_problems);
  drop_unstamped(
    h.journal, file_names::journal, [](auto& e) { return e.mono_ns; },
    h.store_problems);
  return h;
}

} // namespace troupe::chaos
