#include "troupe/test/k8s_lease_store.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

namespace troupe::test {

namespace {

std::string key_of(std::string_view ns, std::string_view name) {
  // Names and namespaces hold no '/', and "ns/name" sorts like etcd's keys.
  return fmt::format("{}/{}", ns, name);
}

k8s_reply object_reply(uint16_t status, const k8s_lease& lease) {
  k8s_reply r;
  r.status = status;
  r.body = lease.json() + "\n";
  return r;
}

// The result of apiserver's ParseResourceVersion ("" and "0" are 0).
struct parsed_rv {
  uint64_t value = 0;
  std::string error; // Go's strconv error text when not a decimal
};

parsed_rv parse_rv(std::string_view rv) {
  parsed_rv out;
  if (rv.empty() || rv == "0")
    return out;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), out.value);
  bool digits_only = rv.find_first_not_of("0123456789") == std::string::npos;
  if (ec == std::errc::result_out_of_range && digits_only)
    out.error = fmt::format("strconv.ParseUint: parsing \"{}\": value out of "
                            "range",
                            rv);
  else if (ec != std::errc{} || end != rv.data() + rv.size() || !digits_only)
    out.error
      = fmt::format("strconv.ParseUint: parsing \"{}\": invalid syntax", rv);
  return out;
}

std::optional<k8s_status> validation_error(const k8s_lease_body& body,
                                           bool with_name) {
  std::vector<k8s_status_cause> causes;
  if (with_name)
    causes = k8s_validate_lease_name(body.name);
  for (auto& c : k8s_validate_lease_spec(body.spec))
    causes.push_back(std::move(c));
  if (causes.empty())
    return std::nullopt;
  return k8s_invalid(k8s_lease_kind, body.name, std::move(causes));
}

std::optional<k8s_status> check_url(const k8s_lease_body& body,
                                    std::string_view ns,
                                    std::optional<std::string_view> name) {
  if (name && body.name != *name)
    return k8s_bad_request(fmt::format("the name of the object ({}) does not "
                                       "match the name on the URL ({})",
                                       body.name, *name));
  if (!body.ns.empty() && body.ns != ns)
    return k8s_bad_request("the namespace of the provided object does not "
                           "match the namespace sent on the request");
  return std::nullopt;
}

} // namespace

k8s_lease_store::k8s_lease_store(k8s_lease_store_options opts)
  : opts_(std::move(opts)),
    namespaces_(opts_.namespaces.begin(), opts_.namespaces.end()) {}

bool k8s_lease_store::namespace_exists(std::string_view ns) const {
  return namespaces_.empty() || namespaces_.count(ns) > 0;
}

std::string k8s_lease_store::next_revision() {
  ++writes_;
  return std::to_string(++revision_);
}

std::string k8s_lease_store::resource_version() const {
  return std::to_string(revision_);
}

const k8s_lease* k8s_lease_store::find(std::string_view ns,
                                       std::string_view name) const {
  auto it = objects_.find(key_of(ns, name));
  return it == objects_.end() ? nullptr : &it->second;
}

std::vector<k8s_lease> k8s_lease_store::all() const {
  std::vector<k8s_lease> out;
  for (const auto& [key, lease] : objects_)
    out.push_back(lease);
  return out;
}

k8s_reply k8s_lease_store::get(std::string_view ns,
                               std::string_view name) const {
  if (auto* lease = find(ns, name))
    return object_reply(200, *lease);
  return to_reply(k8s_not_found(name));
}

k8s_reply k8s_lease_store::list(std::string_view ns) const {
  std::vector<const k8s_lease*> items;
  for (const auto& [key, lease] : objects_)
    if (ns.empty() || lease.ns == ns)
      items.push_back(&lease);
  k8s_reply r;
  r.body = k8s_render_lease_list(items, resource_version()) + "\n";
  return r;
}

k8s_reply k8s_lease_store::store_new(std::string_view ns, k8s_lease_body body,
                                     const k8s_write_context& ctx) {
  k8s_lease lease;
  lease.ns = std::string{ns};
  lease.name = std::move(body.name);
  lease.uid = ctx.new_uid;
  lease.creation_timestamp = ctx.now;
  lease.labels = std::move(body.labels);
  lease.annotations = std::move(body.annotations);
  lease.spec = std::move(body.spec);
  lease.spec_json = std::move(body.spec_json);
  lease.resource_version = next_revision();
  auto key = key_of(ns, lease.name);
  auto& stored = objects_[key] = std::move(lease);
  return object_reply(201, stored);
}

k8s_reply k8s_lease_store::create(std::string_view ns, std::string_view body,
                                  const k8s_write_context& ctx) {
  auto decoded = k8s_decode_lease(body);
  if (auto* err = std::get_if<k8s_status>(&decoded))
    return to_reply(*err);
  auto& b = std::get<k8s_lease_body>(decoded);
  if (auto bad = check_url(b, ns, std::nullopt))
    return to_reply(*bad);
  if (auto invalid = validation_error(b, true))
    return to_reply(*invalid);
  if (!namespace_exists(ns))
    return to_reply(k8s_namespace_not_found(ns));
  if (auto rv = parse_rv(b.resource_version); rv.error.empty() && rv.value > 0)
    return to_reply(k8s_unknown_error("resourceVersion should not be set on "
                                      "objects to be created"));
  if (find(ns, b.name))
    return to_reply(k8s_already_exists(b.name));
  return store_new(ns, std::move(b), ctx);
}

k8s_reply k8s_lease_store::replace(std::string_view ns, std::string_view name,
                                   std::string_view body,
                                   const k8s_write_context& ctx) {
  auto decoded = k8s_decode_lease(body);
  if (auto* err = std::get_if<k8s_status>(&decoded))
    return to_reply(*err);
  return update(ns, name, std::move(std::get<k8s_lease_body>(decoded)), ctx);
}

k8s_reply k8s_lease_store::update(std::string_view ns, std::string_view name,
                                  k8s_lease_body b,
                                  const k8s_write_context& ctx) {
  if (auto bad = check_url(b, ns, name))
    return to_reply(*bad);
  auto* existing = find(ns, name);
  // A uid in the body is a storage precondition (rest/update.go), checked
  // against a missing object too (its uid is then empty).
  if (auto have = existing ? existing->uid : std::string{};
      !b.uid.empty() && b.uid != have)
    return to_reply(k8s_conflict(
      k8s_lease_resource, name,
      fmt::format("StorageError: invalid object, Code: 4, Key: "
                  "/registry/leases/{}/{}, ResourceVersion: 0, "
                  "AdditionalErrorMsg: Precondition failed: UID in "
                  "precondition: {}, UID in object meta: {}",
                  ns, name, b.uid, have)));
  auto rv = parse_rv(b.resource_version);
  if (!rv.error.empty())
    return to_reply(k8s_unknown_error(
      fmt::format("resourceVersion: Invalid value: \"{}\": {}",
                  b.resource_version, rv.error)));
  if (!existing) {
    if (auto invalid = validation_error(b, true))
      return to_reply(*invalid);
    if (ctx.create_denied)
      return to_reply(*ctx.create_denied);
    if (!namespace_exists(ns))
      return to_reply(k8s_namespace_not_found(ns));
    return store_new(ns, std::move(b), ctx);
  }
  if (rv.value == 0)
    return to_reply(
      k8s_invalid(k8s_lease_resource, name,
                  {{"FieldValueInvalid",
                    "Invalid value: 0x0: must be specified for an update",
                    "metadata.resourceVersion"}}));
  bool stale = b.resource_version != existing->resource_version;
  if (stale
      && opts_.planted_bug != k8s_planted_bug::accept_stale_resource_version)
    return to_reply(k8s_stale_conflict(name));
  if (auto invalid = validation_error(b, false))
    return to_reply(*invalid);
  auto& lease = objects_[key_of(ns, name)];
  if (lease.labels == b.labels && lease.annotations == b.annotations
      && lease.spec_json == b.spec_json)
    return object_reply(200, lease);
  lease.labels = std::move(b.labels);
  lease.annotations = std::move(b.annotations);
  lease.spec = std::move(b.spec);
  lease.spec_json = std::move(b.spec_json);
  lease.resource_version = next_revision();
  return object_reply(200, lease);
}

k8s_reply k8s_lease_store::merge_patch(std::string_view ns,
                                       std::string_view name,
                                       std::string_view patch,
                                       const k8s_write_context& ctx) {
  auto* existing = find(ns, name);
  if (!existing)
    return to_reply(k8s_not_found(name));
  auto merged = k8s_merge_patch(existing->json(), patch);
  if (auto* err = std::get_if<k8s_status>(&merged))
    return to_reply(*err);
  return replace(ns, name, std::get<std::string>(merged), ctx);
}

k8s_reply k8s_lease_store::remove(std::string_view ns, std::string_view name,
                                  std::string_view body) {
  auto options = k8s_decode_delete_options(body);
  if (auto* err = std::get_if<k8s_status>(&options))
    return to_reply(*err);
  auto& pre = std::get<k8s_delete_preconditions>(options);
  auto* existing = find(ns, name);
  if (!existing)
    return to_reply(k8s_not_found(name));
  if (pre.uid && *pre.uid != existing->uid)
    return to_reply(k8s_conflict(
      k8s_lease_kind, name,
      fmt::format("the UID in the precondition ({}) does not match the UID in "
                  "record ({}). The object might have been deleted and then "
                  "recreated",
                  *pre.uid, existing->uid)));
  if (pre.resource_version
      && *pre.resource_version != existing->resource_version)
    return to_reply(k8s_conflict(
      k8s_lease_kind, name,
      fmt::format("the ResourceVersion in the precondition ({}) "
                  "does not match the ResourceVersion in record "
                  "({}). The object might have been modified",
                  *pre.resource_version, existing->resource_version)));
  k8s_status ok;
  ok.status = "Success";
  ok.has_details = true;
  ok.details_name = std::string{name};
  ok.details_group = std::string{k8s_lease_group};
  ok.details_kind = std::string{k8s_lease_resource};
  ok.details_uid = existing->uid;
  erase(ns, name);
  return to_reply(ok);
}

std::variant<k8s_lease, k8s_status>
k8s_lease_store::put(std::string_view ns, std::string_view name,
                     std::string_view spec_json, const k8s_write_context& ctx) {
  auto decoded = k8s_decode_lease(fmt::format(R"({{"spec":{}}})", spec_json));
  if (auto* err = std::get_if<k8s_status>(&decoded))
    return *err;
  auto& b = std::get<k8s_lease_body>(decoded);
  auto it = objects_.find(key_of(ns, name));
  if (it == objects_.end()) {
    b.name = std::string{name};
    store_new(ns, std::move(b), ctx);
    return *find(ns, name);
  }
  it->second.spec = std::move(b.spec);
  it->second.spec_json = std::move(b.spec_json);
  it->second.resource_version = next_revision();
  return it->second;
}

bool k8s_lease_store::erase(std::string_view ns, std::string_view name) {
  auto it = objects_.find(key_of(ns, name));
  if (it == objects_.end())
    return false;
  objects_.erase(it);
  next_revision();
  return true;
}

} // namespace troupe::test
