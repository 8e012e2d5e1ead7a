#include "troupe/bootstrap/seed_nodes_answer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/cluster/member.hpp"

namespace troupe::bootstrap {

namespace {

using cluster::member_status;

bool offered(member_status x) {
  return x == member_status::up || x == member_status::weakly_up;
}

runtime::error bad(std::string what) {
  return runtime::make_error(errc::bad_probe_answer,
                             fmt::format("seed-nodes answer: {}", what));
}

runtime::expected<runtime::unique_address>
address_field(const rapidjson::Value& obj, const char* name,
              std::string_view where) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString())
    return bad(fmt::format("{}\"{}\" is missing or not a string", where, name));
  std::string_view text{it->value.GetString(), it->value.GetStringLength()};
  auto a = runtime::parse_unique_address(text);
  if (!a)
    return bad(fmt::format("{}\"{}\": {}", where, name, a.error().message));
  return std::move(*a);
}

runtime::expected<seed_node> parse_seed_node(const rapidjson::Value& v,
                                             size_t index) {
  auto where = fmt::format("seed_nodes[{}]: ", index);
  if (!v.IsObject())
    return bad(where + "not an object");
  seed_node out;
  auto node = address_field(v, "node", where);
  if (!node)
    return node.error();
  out.node = std::move(*node);
  auto status = v.FindMember("status");
  if (status == v.MemberEnd() || !status->value.IsString())
    return bad(where + "\"status\" is missing or not a string");
  out.status = status->value.GetString();
  if (out.status != "up" && out.status != "weakly_up")
    return bad(
      fmt::format("{}status {:?} is not up or weakly_up", where, out.status));
  if (auto roles = v.FindMember("roles"); roles != v.MemberEnd()) {
    if (!roles->value.IsArray())
      return bad(where + "\"roles\" is not an array");
    for (const auto& r : roles->value.GetArray()) {
      if (!r.IsString())
        return bad(where + "a role is not a string");
      out.roles.emplace_back(r.GetString());
    }
  }
  return out;
}

} // namespace

seed_nodes_answer seed_nodes_of(const runtime::unique_address& self,
                                const cluster::membership_state* view) {
  seed_nodes_answer out{self, {}};
  if (view == nullptr)
    return out;
  const auto* me = view->self_member();
  if (me == nullptr || me->address != self || !offered(me->status))
    return out;
  std::vector<cluster::member> candidates;
  for (const auto& m : view->latest_gossip().members())
    if (offered(m.status)
        && view->is_reachable_excluding_downed_observers(m.address))
      candidates.push_back(m);
  std::sort(candidates.begin(), candidates.end(), cluster::by_age{});
  // Self first among the offered when it would be cut off: a node that
  // answers must be among the seeds it offers (it acks init_join itself).
  auto self_at = std::find_if(candidates.begin(), candidates.end(),
                              [&](const auto& m) { return m.address == self; });
  if (self_at == candidates.end())
    candidates.insert(candidates.begin(), *me);
  else if (static_cast<size_t>(self_at - candidates.begin())
           >= max_seed_nodes_offered)
    std::rotate(candidates.begin() + max_seed_nodes_offered - 1, self_at,
                self_at + 1);
  if (candidates.size() > max_seed_nodes_offered)
    candidates.resize(max_seed_nodes_offered);
  for (const auto& m : candidates)
    out.seed_nodes.push_back(
      seed_node{m.address, cluster::to_string(m.status), m.roles});
  return out;
}

std::string to_json(const seed_nodes_answer& x) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  auto put = [&w](const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("self_node");
  put(runtime::to_string(x.self_node));
  w.Key("seed_nodes");
  w.StartArray();
  for (const auto& s : x.seed_nodes) {
    w.StartObject();
    w.Key("node");
    put(runtime::to_string(s.node));
    w.Key("status");
    put(s.status);
    w.Key("roles");
    w.StartArray();
    for (const auto& r : s.roles)
      put(r);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

runtime::expected<seed_nodes_answer>
parse_seed_nodes_answer(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError())
    return bad(fmt::format("not JSON: {} at offset {}",
                           rapidjson::GetParseError_En(doc.GetParseError()),
                           doc.GetErrorOffset()));
  if (!doc.IsObject())
    return bad("not a JSON object");
  seed_nodes_answer out;
  auto self = address_field(doc, "self_node", "");
  if (!self)
    return self.error();
  out.self_node = std::move(*self);
  auto seeds = doc.FindMember("seed_nodes");
  if (seeds == doc.MemberEnd() || !seeds->value.IsArray())
    return bad("\"seed_nodes\" is missing or not an array");
  const auto& arr = seeds->value.GetArray();
  if (arr.Size() > max_seed_nodes_offered)
    return bad(fmt::format("{} seed nodes, more than the {} a node offers",
                           arr.Size(), max_seed_nodes_offered));
  for (rapidjson::SizeType i = 0; i < arr.Size(); ++i) {
    auto s = parse_seed_node(arr[i], i);
    if (!s)
      return s.error();
    out.seed_nodes.push_back(std::move(*s));
  }
  return out;
}

} // namespace troupe::bootstrap
