#include "troupe/bootstrap/kubernetes_pod_list.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/runtime/text_escape.hpp"

namespace troupe::bootstrap {

namespace {

// A PodList of a few hundred pods is a few MiB; far more is not an answer
// discovery can use.
constexpr size_t max_pod_list_bytes = 16 * 1024 * 1024;

using value = rapidjson::Value;

runtime::error bad(std::string_view why) {
  return runtime::make_error(errc::bad_discovery_answer,
                             fmt::format("PodList: {}", why));
}

const value* member(const value& obj, std::string_view key) {
  if (!obj.IsObject())
    return nullptr;
  auto i = obj.FindMember(value{rapidjson::StringRef(key.data(), key.size())});
  return i == obj.MemberEnd() || i->value.IsNull() ? nullptr : &i->value;
}

// Reads an optional string member into `out`; an error names `path.key`.
runtime::error opt_string(const value& obj, std::string_view key,
                          const std::string& path, std::string& out) {
  auto v = member(obj, key);
  if (v == nullptr)
    return {};
  if (!v->IsString())
    return bad(fmt::format("{}.{} is not a string", path, key));
  out.assign(v->GetString(), v->GetStringLength());
  return {};
}

// An optional member that must be an object (or an array): nullptr when
// absent, an error when of another type.
runtime::error opt_member(const value& obj, std::string_view key,
                          const std::string& path, bool array,
                          const value*& out) {
  out = member(obj, key);
  if (out != nullptr && (array ? !out->IsArray() : !out->IsObject()))
    return bad(
      fmt::format("{}.{} is not an {}", path, key, array ? "array" : "object"));
  return {};
}

runtime::error parse_port(const value& v, const std::string& path,
                          kubernetes_container_port& out) {
  if (!v.IsObject())
    return bad(fmt::format("{} is not an object", path));
  if (auto err = opt_string(v, "name", path, out.name))
    return err;
  if (auto err = opt_string(v, "protocol", path, out.protocol))
    return err;
  auto port = member(v, "containerPort");
  if (port == nullptr || !port->IsInt64() || port->GetInt64() < 1
      || port->GetInt64() > 65535)
    return bad(
      fmt::format("{}.containerPort is not an integer in 1..65535", path));
  out.container_port = static_cast<uint16_t>(port->GetInt64());
  return {};
}

runtime::error parse_containers(const value& spec, const std::string& path,
                                std::vector<kubernetes_container_port>& out) {
  const value* containers = nullptr;
  if (auto err = opt_member(spec, "containers", path, true, containers))
    return err;
  if (containers == nullptr)
    return {};
  for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
    auto cpath = fmt::format("{}.containers[{}]", path, i);
    const auto& c = (*containers)[i];
    if (!c.IsObject())
      return bad(fmt::format("{} is not an object", cpath));
    const value* ports = nullptr;
    if (auto err = opt_member(c, "ports", cpath, true, ports))
      return err;
    for (rapidjson::SizeType j = 0; ports != nullptr && j < ports->Size();
         ++j) {
      kubernetes_container_port p;
      if (auto err
          = parse_port((*ports)[j], fmt::format("{}.ports[{}]", cpath, j), p))
        return err;
      out.push_back(std::move(p));
    }
  }
  return {};
}

runtime::error parse_pod(const value& v, const std::string& path,
                         kubernetes_pod& pod) {
  if (!v.IsObject())
    return bad(fmt::format("{} is not an object", path));
  const value* meta = nullptr;
  const value* spec = nullptr;
  const value* status = nullptr;
  if (auto err = opt_member(v, "metadata", path, false, meta))
    return err;
  if (auto err = opt_member(v, "spec", path, false, spec))
    return err;
  if (auto err = opt_member(v, "status", path, false, status))
    return err;
  auto mpath = path + ".metadata";
  if (meta != nullptr) {
    if (auto err = opt_string(*meta, "name", mpath, pod.name))
      return err;
    if (auto err
        = opt_string(*meta, "deletionTimestamp", mpath, pod.deletion_timestamp))
      return err;
  }
  if (pod.name.empty())
    return bad(fmt::format("{}.name is missing", mpath));
  if (status != nullptr) {
    if (auto err = opt_string(*status, "phase", path + ".status", pod.phase))
      return err;
    if (auto err = opt_string(*status, "podIP", path + ".status", pod.pod_ip))
      return err;
  }
  if (spec != nullptr)
    return parse_containers(*spec, path + ".spec", pod.ports);
  return {};
}

} // namespace

runtime::expected<kubernetes_pod_list>
parse_kubernetes_pod_list(std::string_view json) {
  if (json.size() > max_pod_list_bytes)
    return bad(fmt::format("body of {} bytes exceeds {} bytes", json.size(),
                           max_pod_list_bytes));
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag
            | rapidjson::kParseValidateEncodingFlag>(json.data(), json.size());
  if (doc.HasParseError())
    return bad(fmt::format("malformed JSON at offset {}: {}",
                           doc.GetErrorOffset(),
                           rapidjson::GetParseError_En(doc.GetParseError())));
  if (!doc.IsObject())
    return bad("not a JSON object");
  auto kind = member(doc, "kind");
  if (kind == nullptr || !kind->IsString())
    return bad("kind is missing");
  if (kind->GetString() != std::string_view{"PodList"})
    return bad(fmt::format("kind is \"{}\", not \"PodList\"",
                           runtime::escape_for_message(kind->GetString())));
  kubernetes_pod_list list;
  if (auto meta = member(doc, "metadata"); meta != nullptr)
    if (auto err = opt_string(*meta, "resourceVersion", "metadata",
                              list.resource_version))
      return err;
  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd())
    return bad("items is missing");
  if (items->value.IsNull())
    return list;
  if (!items->value.IsArray())
    return bad("items is not an array");
  for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
    kubernetes_pod pod;
    if (auto err = parse_pod(items->value[i], fmt::format("items[{}]", i), pod))
      return err;
    list.items.push_back(std::move(pod));
  }
  return list;
}

namespace {

// The reason `pod` is no contact point, or "" when it is one (then `port`
// is set).
std::string exclusion(const kubernetes_pod& pod, std::string_view port_name,
                      uint16_t fallback_port, uint16_t& port) {
  if (!pod.deletion_timestamp.empty())
    return fmt::format("being deleted since {}",
                       runtime::escape_for_message(pod.deletion_timestamp));
  if (pod.phase != "Running")
    return fmt::format("phase {}", pod.phase.empty()
                                     ? std::string{"unknown"}
                                     : runtime::escape_for_message(pod.phase));
  if (pod.pod_ip.empty())
    return "no status.podIP";
  auto named = std::find_if(pod.ports.begin(), pod.ports.end(), [&](auto& p) {
    return p.name == port_name && p.protocol == "TCP";
  });
  port = named != pod.ports.end() ? named->container_port : fallback_port;
  if (port == 0)
    return fmt::format("no TCP container port named {} and no "
                       "contact_point_port",
                       runtime::escape_for_message(port_name));
  return {};
}

} // namespace

pod_selection select_contact_points(const kubernetes_pod_list& list,
                                    std::string_view port_name,
                                    uint16_t fallback_port) {
  pod_selection out;
  for (const auto& pod : list.items) {
    uint16_t port = 0;
    auto why = exclusion(pod, port_name, fallback_port, port);
    if (!why.empty()) {
      out.excluded.push_back(
        fmt::format("{} ({})", runtime::escape_for_message(pod.name), why));
      continue;
    }
    out.contact_points.push_back(contact_point{pod.pod_ip, port});
  }
  auto& cps = out.contact_points;
  std::sort(cps.begin(), cps.end());
  cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  return out;
}

} // namespace troupe::bootstrap
