#include "troupe/test/k8s_pod_store.hpp"

#include <optional>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "troupe/test/k8s_label_selector.hpp"

namespace troupe::test {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string key_of(std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", ns, name);
}

void field(json_writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void field_nonempty(json_writer& w, std::string_view key,
                    std::string_view value) {
  if (!value.empty())
    field(w, key, value);
}

// ObjectMeta in the Go struct's field order.
void write_metadata(json_writer& w, const k8s_pod& pod) {
  w.Key("metadata");
  w.StartObject();
  field(w, "name", pod.name);
  field(w, "namespace", pod.ns);
  field(w, "uid", pod.uid);
  field(w, "resourceVersion", pod.resource_version);
  field(w, "creationTimestamp", pod.creation_timestamp);
  if (!pod.deletion_timestamp.empty()) {
    field(w, "deletionTimestamp", pod.deletion_timestamp);
    w.Key("deletionGracePeriodSeconds");
    w.Int(30);
  }
  if (!pod.labels.empty()) {
    w.Key("labels");
    w.StartObject();
    for (const auto& [k, v] : pod.labels)
      field(w, k, v);
    w.EndObject();
  }
  w.EndObject();
}

void write_spec(json_writer& w, const k8s_pod& pod) {
  w.Key("spec");
  w.StartObject();
  w.Key("containers");
  w.StartArray();
  for (const auto& c : pod.containers) {
    w.StartObject();
    field(w, "name", c.name);
    field(w, "image", c.image);
    if (!c.ports.empty()) {
      w.Key("ports");
      w.StartArray();
      for (const auto& p : c.ports) {
        w.StartObject();
        field_nonempty(w, "name", p.name);
        w.Key("containerPort");
        w.Int(p.container_port);
        field(w, "protocol", p.protocol);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void write_status(json_writer& w, const k8s_pod& pod) {
  w.Key("status");
  w.StartObject();
  field_nonempty(w, "phase", pod.phase);
  if (!pod.pod_ip.empty()) {
    field(w, "podIP", pod.pod_ip);
    w.Key("podIPs");
    w.StartArray();
    w.StartObject();
    field(w, "ip", pod.pod_ip);
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
}

void write_pod(json_writer& w, const k8s_pod& pod) {
  w.StartObject();
  write_metadata(w, pod);
  write_spec(w, pod);
  write_status(w, pod);
  w.EndObject();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0
               && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

} // namespace

std::optional<std::string> k8s_query_param(std::string_view query,
                                           std::string_view name) {
  size_t at = 0;
  while (at <= query.size()) {
    auto end = std::min(query.find('&', at), query.size());
    auto part = query.substr(at, end - at);
    auto eq = part.find('=');
    if (percent_decode(part.substr(0, eq)) == name)
      return eq == std::string_view::npos ? std::string{}
                                          : percent_decode(part.substr(eq + 1));
    at = end + 1;
  }
  return std::nullopt;
}

std::string k8s_pod_json(const k8s_pod& pod) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  write_pod(w, pod);
  return buf.GetString();
}

k8s_pod k8s_pod_store::put(k8s_pod pod, std::string resource_version,
                           std::string uid, std::string creation_timestamp) {
  auto key = key_of(pod.ns, pod.name);
  if (auto it = pods_.find(key); it != pods_.end()) {
    pod.uid = it->second.uid;
    pod.creation_timestamp = it->second.creation_timestamp;
  } else {
    pod.uid = std::move(uid);
    pod.creation_timestamp = std::move(creation_timestamp);
  }
  pod.resource_version = std::move(resource_version);
  pods_[key] = pod;
  return pod;
}

bool k8s_pod_store::erase(std::string_view ns, std::string_view name) {
  auto it = pods_.find(key_of(ns, name));
  if (it == pods_.end())
    return false;
  pods_.erase(it);
  return true;
}

const k8s_pod* k8s_pod_store::find(std::string_view ns,
                                   std::string_view name) const {
  auto it = pods_.find(key_of(ns, name));
  return it == pods_.end() ? nullptr : &it->second;
}

std::vector<k8s_pod> k8s_pod_store::all() const {
  std::vector<k8s_pod> out;
  for (const auto& [key, pod] : pods_)
    out.push_back(pod);
  return out;
}

k8s_reply k8s_pod_store::list(std::string_view ns, std::string_view query,
                              std::string_view resource_version) const {
  auto text = k8s_query_param(query, "labelSelector").value_or("");
  auto selector = parse_k8s_label_selector(text);
  if (!selector)
    return to_reply(k8s_bad_request(fmt::format(
      "unable to parse requirement: {}", selector.error().message)));
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  field(w, "kind", "PodList");
  field(w, "apiVersion", "v1");
  w.Key("metadata");
  w.StartObject();
  field(w, "resourceVersion", resource_version);
  w.EndObject();
  w.Key("items");
  w.StartArray();
  auto prefix = key_of(ns, "");
  for (auto it = pods_.lower_bound(prefix);
       it != pods_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it)
    if (selector->matches(it->second.labels))
      write_pod(w, it->second);
  w.EndArray();
  w.EndObject();
  k8s_reply r;
  r.body = k8s_escape_html(buf.GetString()) + "\n";
  return r;
}

} // namespace troupe::test
