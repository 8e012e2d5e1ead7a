// The driver's views.jsonl lines (view_log.hpp).

#include "view_log.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fmt/format.h>

namespace troupe::chaos {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put_text(json_writer& w, std::string_view x) {
  w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
}

std::string text_of(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

// The member at `index`, or why it is not one.
std::variant<view_member, std::string> read_member(const rapidjson::Value& m,
                                                   size_t index) {
  if (!m.IsObject())
    return fmt::format("members[{}] is not an object", index);
  view_member out;
  for (auto [key, field] :
       {std::pair{"address", &out.address}, std::pair{"status", &out.status}}) {
    auto i = m.FindMember(key);
    if (i == m.MemberEnd() || !i->value.IsString())
      return fmt::format("members[{}] has no string \"{}\"", index, key);
    *field = text_of(i->value);
  }
  if (auto r = m.FindMember("reachable"); r != m.MemberEnd()) {
    if (!r->value.IsBool())
      return fmt::format("members[{}]'s \"reachable\" is not a boolean", index);
    out.reachable = r->value.GetBool();
  }
  return out;
}

// The optional incarnation into `out`; false when it has another type.
bool read_incarnation(const rapidjson::Value& doc,
                      std::optional<std::string>& out) {
  auto i = doc.FindMember("incarnation");
  if (i == doc.MemberEnd() || i->value.IsNull())
    return true;
  if (i->value.IsString())
    out = text_of(i->value);
  else if (i->value.IsUint64())
    out = std::to_string(i->value.GetUint64());
  else
    return false;
  return true;
}

} // namespace

std::variant<members_answer, std::string>
parse_members_answer(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError())
    return fmt::format("not JSON: {} at offset {}",
                       rapidjson::GetParseError_En(doc.GetParseError()),
                       doc.GetErrorOffset());
  if (!doc.IsObject())
    return std::string{"not a JSON object"};
  members_answer out;
  auto self = doc.FindMember("self");
  if (self == doc.MemberEnd() || !self->value.IsString())
    return std::string{"no string \"self\""};
  out.self = text_of(self->value);
  if (!read_incarnation(doc, out.incarnation))
    return std::string{"\"incarnation\" is neither a string nor a number"};
  auto ms = doc.FindMember("members");
  if (ms == doc.MemberEnd() || !ms->value.IsArray())
    return std::string{"no array \"members\""};
  size_t index = 0;
  for (auto& m : ms->value.GetArray()) {
    auto member = read_member(m, index++);
    if (auto* why = std::get_if<std::string>(&member))
      return std::move(*why);
    out.members.push_back(std::get<view_member>(std::move(member)));
  }
  return out;
}

std::string view_line(const view_sample& x) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("mono_ns");
  w.Int64(x.mono_ns);
  w.Key("sent_ns");
  w.Int64(x.sent_ns);
  w.Key("round");
  w.Uint64(x.round);
  w.Key("final");
  w.Bool(x.final);
  w.Key("node");
  put_text(w, x.node);
  w.Key("pid");
  w.Uint64(x.pid);
  w.Key("start");
  w.Uint64(x.start);
  if (x.view) {
    w.Key("self");
    put_text(w, x.view->self);
    if (x.view->incarnation) {
      w.Key("incarnation");
      put_text(w, *x.view->incarnation);
    }
    w.Key("members");
    w.StartArray();
    for (auto& m : x.view->members) {
      w.StartObject();
      w.Key("address");
      put_text(w, m.address);
      w.Key("status");
      put_text(w, m.status);
      w.Key("reachable");
      w.Bool(m.reachable);
      w.EndObject();
    }
    w.EndArray();
  } else {
    w.Key("error");
    put_text(w, x.error);
  }
  w.EndObject();
  std::string line = buf.GetString();
  line += '\n';
  return line;
}

} // namespace troupe::chaos
