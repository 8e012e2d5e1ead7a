#include "cluster_view.hpp"

#include <algorithm>

#include <rapidjson/document.h>

namespace troupe::demo {

namespace {

std::optional<rapidjson::Document> parse(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError())
    return std::nullopt;
  return doc;
}

std::optional<std::string> string_field(const rapidjson::Value& obj,
                                        const char* key) {
  auto i = obj.FindMember(key);
  if (i == obj.MemberEnd() || !i->value.IsString()
      || i->value.GetStringLength() == 0)
    return std::nullopt;
  return std::string{i->value.GetString(), i->value.GetStringLength()};
}

std::optional<uint64_t> uint_field(const rapidjson::Value& obj,
                                   const char* key) {
  auto i = obj.FindMember(key);
  if (i == obj.MemberEnd() || !i->value.IsUint64())
    return std::nullopt;
  return i->value.GetUint64();
}

bool bool_field(const rapidjson::Value& obj, const char* key, bool fallback) {
  auto i = obj.FindMember(key);
  return i == obj.MemberEnd() || !i->value.IsBool() ? fallback
                                                    : i->value.GetBool();
}

} // namespace

int cluster_snapshot::up_count() const {
  return static_cast<int>(
    std::count_if(members.begin(), members.end(), [](const member_row& m) {
      return m.status == "up" && m.reachable;
    }));
}

bool read_members(std::string_view body, cluster_snapshot& snap) {
  auto doc = parse(body);
  if (!doc || !doc->IsObject())
    return false;
  auto ms = doc->FindMember("members");
  if (ms == doc->MemberEnd() || !ms->value.IsArray())
    return false;
  snap.members.clear();
  for (auto& m : ms->value.GetArray()) {
    if (!m.IsObject())
      continue;
    auto address = string_field(m, "address");
    auto status = string_field(m, "status");
    auto up = m.FindMember("up_number");
    if (address && status)
      snap.members.push_back(
        {*address, *status, bool_field(m, "reachable", true),
         up != m.MemberEnd() && up->value.IsInt() ? up->value.GetInt() : 0});
  }
  snap.leader = string_field(*doc, "leader");
  snap.oldest = string_field(*doc, "oldest");
  snap.members_answered = true;
  return true;
}

bool read_singletons(std::string_view body, std::string_view type,
                     cluster_snapshot& snap) {
  auto doc = parse(body);
  if (!doc || !doc->IsArray())
    return false;
  for (auto& s : doc->GetArray()) {
    if (!s.IsObject() || string_field(s, "type") != std::string{type})
      continue;
    if (auto host = string_field(s, "host")) {
      snap.singleton_host = host;
      snap.singleton_token = uint_field(s, "fencing_token");
    }
  }
  return true;
}

bool read_leases(std::string_view body, std::string_view name_part,
                 cluster_snapshot& snap) {
  auto doc = parse(body);
  if (!doc || !doc->IsArray())
    return false;
  for (auto& l : doc->GetArray()) {
    auto name = l.IsObject() ? string_field(l, "name") : std::nullopt;
    if (!name || name->find(name_part) == std::string::npos
        || !bool_field(l, "held_here", false))
      continue;
    snap.lease_holder = string_field(l, "holder");
    snap.lease_token = uint_field(l, "fencing_token");
    break;
  }
  return true;
}

bool read_shards(std::string_view body, cluster_snapshot& snap) {
  auto doc = parse(body);
  if (!doc || !doc->IsObject())
    return false;
  auto rs = doc->FindMember("regions");
  if (rs == doc->MemberEnd() || !rs->value.IsArray())
    return false;
  snap.shards.clear();
  for (auto& r : rs->value.GetArray()) {
    auto address = r.IsObject() ? string_field(r, "address") : std::nullopt;
    auto shards = address ? r.FindMember("shards") : r.MemberEnd();
    if (!address || shards == r.MemberEnd() || !shards->value.IsArray())
      continue;
    std::vector<std::string> ids;
    for (auto& id : shards->value.GetArray())
      if (id.IsString())
        ids.emplace_back(id.GetString(), id.GetStringLength());
    snap.shards.emplace_back(*address, std::move(ids));
  }
  snap.shards_answered = true;
  return true;
}

} // namespace troupe::demo
