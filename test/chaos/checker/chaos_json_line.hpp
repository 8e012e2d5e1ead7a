#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chaos_history.hpp"
#include "verdict/verdict_core.hpp"

/// @file
/// Reading JSON-lines files field by field, for chaos_history.cpp: the
/// lines of a text, one line's named fields, and tables that say which
/// fields each kind of line carries (so parsing and describing an event
/// read the same table). The demo verdict has a reader like `json_line`
/// private to verdict_records.cpp; this one adds string lists, booleans,
/// arrays of objects and optional fields. Pure.

namespace troupe::chaos::detail {

/// The lines of a text (the verdict's reader: numbered, views, the cut
/// last line flagged).
using demo::verdict::lines_of;
using demo::verdict::text_line;

/// The named fields of one JSON object line; the first fault is kept and
/// later reads do nothing.
class json_line {
public:
  explicit json_line(std::string_view line);
  ~json_line();
  json_line(json_line&&) noexcept;
  json_line& operator=(json_line&&) noexcept;

  /// Empty while every read succeeded, else e.g. `field "token" missing`.
  const std::string& fault() const noexcept {
    return fault_;
  }

  /// Reads a required field; a missing field or one of another type is the
  /// fault.
  void get(const char* name, std::string& out);
  void get(const char* name, uint64_t& out);
  void get(const char* name, int64_t& out);
  void get(const char* name, std::vector<std::string>& out);
  void get(const char* name, bool& out);

  /// Reads a required array of objects, each a json_line of its own (its
  /// faults are its own); an element that is not an object is the fault.
  std::vector<json_line> get_objects(const char* name);

  /// True when the line has field `name`, of any type.
  bool has(const char* name) const;

  /// Reads a required CLOCK_MONOTONIC stamp: an int64 > 0 (a stamp of 0 or
  /// less is the fault).
  void get_stamp(const char* name, int64_t& out);

  /// Reads a field that may be absent: false when absent; a present field
  /// of another type is the fault.
  bool get_optional(const char* name, std::string& out);

private:
  struct impl;
  explicit json_line(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
  std::string fault_;
};

/// A pointer to one of an event's fields.
template <class Event>
using member_ptr
  = std::variant<std::string Event::*, uint64_t Event::*, int64_t Event::*,
                 std::vector<std::string> Event::*>;

/// One field of a kind of line: its JSON name and where it goes.
template <class Event>
struct field_spec {
  const char* name;
  member_ptr<Event> member;
};

/// One kind of line: its name in the file, its enumerator and its own
/// fields (beside the fields every line has).
template <class Kind, class Event>
struct kind_spec {
  const char* name;
  Kind kind;
  std::vector<field_spec<Event>> fields;
};

/// The table's entry for `kind`; nullptr if none.
template <class Kind, class Event>
const kind_spec<Kind, Event>*
find_kind(const std::vector<kind_spec<Kind, Event>>& table, Kind kind) {
  for (auto& k : table)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

/// Reads the kind named by field `key` and that kind's fields into `out`
/// (the kind into `out.*which`); returns the fault, empty if none.
template <class Kind, class Event>
std::string read_kind(json_line& f, const char* key,
                      const std::vector<kind_spec<Kind, Event>>& table,
                      Kind Event::*which, Event& out) {
  std::string name;
  f.get(key, name);
  if (!f.fault().empty())
    return f.fault();
  for (auto& k : table) {
    if (name != k.name)
      continue;
    out.*which = k.kind;
    for (auto& field : k.fields)
      std::visit([&](auto m) { f.get(field.name, out.*m); }, field.member);
    return f.fault();
  }
  return "unknown " + std::string{key} + " \"" + printable(name) + "\"";
}

/// The fault of a stamp of 0 or less: `mono_ns -5 is not a CLOCK_MONOTONIC
/// stamp (> 0)`.
std::string stamp_fault(std::string_view name, int64_t value);

/// `value` as a describe word writes it: numbers in decimal, lists as
/// `[a,b]`, strings `printable`.
std::string word_value(const std::string& x);
std::string word_value(uint64_t x);
std::string word_value(int64_t x);
std::string word_value(const std::vector<std::string>& x);

/// The kind's name and its fields as ` name=value` words.
template <class Kind, class Event>
std::string describe_kind(const std::vector<kind_spec<Kind, Event>>& table,
                          Kind kind, const Event& x) {
  auto* k = find_kind(table, kind);
  if (k == nullptr)
    return "unknown";
  std::string out = k->name;
  for (auto& field : k->fields)
    std::visit(
      [&](auto m) {
        out += ' ';
        out += field.name;
        out += '=';
        out += word_value(x.*m);
      },
      field.member);
  return out;
}

} // namespace troupe::chaos::detail
