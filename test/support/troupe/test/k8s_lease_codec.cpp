// JSON side of the Lease API emulator: decoding request bodies with the
// apiserver's error texts, rendering objects and lists, merge patches.

#include "troupe/test/k8s_lease_codec.hpp"

#include <array>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace troupe::test {

namespace {

namespace rj = rapidjson;
using json_writer = rj::Writer<rj::StringBuffer>;
constexpr unsigned parse_flags
  = rj::kParseFullPrecisionFlag | rj::kParseIterativeFlag;

// The Go type encoding/json names for `findKind` (TypeMeta peek).
constexpr std::string_view find_kind_type
  = "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind "
    "string \"json:\\\"kind,omitempty\\\"\" }";

std::string_view view(const rj::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

std::string stringify(const rj::Value& v) {
  rj::StringBuffer buf;
  json_writer w{buf};
  v.Accept(w);
  return buf.GetString();
}

// Go's quoteChar for syntax errors: 'x'.
std::string go_char(char c) {
  if (c == '\'')
    return "'\\''";
  if (c == '"')
    return "'\"'";
  if (static_cast<unsigned char>(c) < 0x20)
    return fmt::format("'\\x{:02x}'", static_cast<unsigned char>(c));
  return fmt::format("'{}'", c);
}

// encoding/json's SyntaxError text for RapidJSON's error (approximate: the
// common cases map one to one).
std::string go_syntax_error(const rj::Document& doc, std::string_view body) {
  auto at = doc.GetErrorOffset();
  if (at >= body.size())
    return "unexpected end of JSON input";
  auto c = go_char(body[at]);
  switch (doc.GetParseError()) {
    case rj::kParseErrorDocumentRootNotSingular:
      return fmt::format("invalid character {} after top-level value", c);
    case rj::kParseErrorObjectMissName:
      return fmt::format(
        "invalid character {} looking for beginning of object key string", c);
    case rj::kParseErrorObjectMissColon:
      return fmt::format("invalid character {} after object key", c);
    case rj::kParseErrorObjectMissCommaOrCurlyBracket:
      return fmt::format("invalid character {} after object key:value pair", c);
    case rj::kParseErrorArrayMissCommaOrSquareBracket:
      return fmt::format("invalid character {} after array element", c);
    default:
      return fmt::format("invalid character {} looking for beginning of value",
                         c);
  }
}

// apimachinery's summarizeData(body, 30).
std::string summarize(std::string_view body) {
  constexpr size_t max = 30;
  if (body.empty())
    return "<empty>";
  auto cut = body.substr(0, max);
  std::string out;
  if (body.front() == '{')
    out = std::string{cut};
  else
    for (unsigned char c : cut)
      out += fmt::format("{:02x}", c);
  return body.size() > max ? out + " ..." : out;
}

const char* json_kind(const rj::Value& v) {
  if (v.IsString())
    return "string";
  if (v.IsNumber())
    return "number";
  if (v.IsBool())
    return "bool";
  if (v.IsArray())
    return "array";
  return "object";
}

// Collects the first decoding error as encoding/json reports it: an error
// from a custom unmarshaler (MicroTime) aborts decoding and wins; type
// mismatches are remembered and decoding goes on.
struct go_decoder {
  std::string saved;
  std::string aborted;

  void type_error(const rj::Value& v, std::string_view strct,
                  std::string_view field, std::string_view type) {
    if (!saved.empty())
      return;
    // Go names the literal only for numbers that do not fit an integer.
    std::string what = json_kind(v);
    if (v.IsNumber() && type == "int32")
      what = "number " + stringify(v);
    saved = fmt::format("json: cannot unmarshal {} into Go struct field {}.{} "
                        "of type {}",
                        what, strct, field, type);
  }

  bool failed() const {
    return !saved.empty() || !aborted.empty();
  }

  std::string error() const {
    return aborted.empty() ? saved : aborted;
  }

  // A string field; nullopt for null/absent or a type error.
  std::optional<std::string> string_field(const rj::Value& obj, const char* key,
                                          std::string_view strct,
                                          std::string_view path,
                                          std::string_view type = "string") {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || it->value.IsNull())
      return std::nullopt;
    if (!it->value.IsString()) {
      type_error(it->value, strct, path, type);
      return std::nullopt;
    }
    return std::string{view(it->value)};
  }

  std::optional<int32_t> int32_field(const rj::Value& obj, const char* key,
                                     std::string_view path) {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || it->value.IsNull())
      return std::nullopt;
    if (!it->value.IsInt()) {
      type_error(it->value, "LeaseSpec", path, "int32");
      return std::nullopt;
    }
    return it->value.GetInt();
  }

  std::optional<std::string> micro_time_field(const rj::Value& obj,
                                              const char* key) {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || it->value.IsNull() || !aborted.empty())
      return std::nullopt;
    if (!it->value.IsString()) {
      aborted = fmt::format("json: cannot unmarshal {} into Go value of type "
                            "string",
                            json_kind(it->value));
      return std::nullopt;
    }
    auto t = k8s_parse_micro_time(view(it->value));
    if (!t.error.empty()) {
      aborted = t.error;
      return std::nullopt;
    }
    return t.canonical;
  }

  // labels / annotations: a JSON object of strings, re-serialized.
  std::string string_map(const rj::Value& meta, const char* key) {
    auto it = meta.FindMember(key);
    if (it == meta.MemberEnd() || it->value.IsNull())
      return {};
    auto path = fmt::format("metadata.{}", key);
    if (!it->value.IsObject()) {
      type_error(it->value, "ObjectMeta", path, "map[string]string");
      return {};
    }
    for (auto& m : it->value.GetObject())
      if (!m.value.IsString())
        type_error(m.value, "ObjectMeta", path, "string");
    return stringify(it->value);
  }
};

constexpr std::array<const char*, 7> spec_keys
  = {"holderIdentity", "leaseDurationSeconds", "acquireTime",
     "renewTime",      "leaseTransitions",     "strategy",
     "preferredHolder"};

bool is_spec_key(std::string_view key) {
  for (auto* k : spec_keys)
    if (key == k)
      return true;
  return false;
}

void put_string(json_writer& w, std::string_view key,
                const std::optional<std::string>& v) {
  if (!v)
    return;
  w.Key(key.data(), static_cast<rj::SizeType>(key.size()));
  w.String(v->data(), static_cast<rj::SizeType>(v->size()));
}

void put_int(json_writer& w, std::string_view key,
             const std::optional<int32_t>& v) {
  if (!v)
    return;
  w.Key(key.data(), static_cast<rj::SizeType>(key.size()));
  w.Int(*v);
}

void put_raw(json_writer& w, std::string_view key, std::string_view raw) {
  if (raw.empty())
    return;
  w.Key(key.data(), static_cast<rj::SizeType>(key.size()));
  w.RawValue(raw.data(), raw.size(), rj::kObjectType);
}

// The spec as stored: known fields in the Go struct's order, then the rest.
void decode_spec(go_decoder& dec, const rj::Value& spec, k8s_lease_body& out) {
  auto& s = out.spec;
  auto path = [](const char* key) { return fmt::format("spec.{}", key); };
  s.holder_identity = dec.string_field(spec, "holderIdentity", "LeaseSpec",
                                       path("holderIdentity"));
  s.lease_duration_seconds = dec.int32_field(spec, "leaseDurationSeconds",
                                             path("leaseDurationSeconds"));
  s.acquire_time = dec.micro_time_field(spec, "acquireTime");
  s.renew_time = dec.micro_time_field(spec, "renewTime");
  s.lease_transitions
    = dec.int32_field(spec, "leaseTransitions", path("leaseTransitions"));
  s.strategy = dec.string_field(spec, "strategy", "LeaseSpec", path("strategy"),
                                "v1.CoordinatedLeaseStrategy");
  s.preferred_holder = dec.string_field(spec, "preferredHolder", "LeaseSpec",
                                        path("preferredHolder"));
  rj::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_string(w, "holderIdentity", s.holder_identity);
  put_int(w, "leaseDurationSeconds", s.lease_duration_seconds);
  put_string(w, "acquireTime", s.acquire_time);
  put_string(w, "renewTime", s.renew_time);
  put_int(w, "leaseTransitions", s.lease_transitions);
  put_string(w, "strategy", s.strategy);
  put_string(w, "preferredHolder", s.preferred_holder);
  for (auto& m : spec.GetObject()) {
    if (is_spec_key(view(m.name)))
      continue;
    w.Key(m.name.GetString(), m.name.GetStringLength());
    m.value.Accept(w);
  }
  w.EndObject();
  out.spec_json = k8s_escape_html(buf.GetString());
}

void decode_metadata(go_decoder& dec, const rj::Value& meta,
                     k8s_lease_body& out) {
  auto field = [&](const char* key, std::string_view type = "string") {
    return dec
      .string_field(meta, key, "ObjectMeta", fmt::format("metadata.{}", key),
                    type)
      .value_or("");
  };
  out.name = field("name");
  out.ns = field("namespace");
  out.uid = field("uid", "types.UID");
  out.resource_version = field("resourceVersion");
  out.labels = k8s_escape_html(dec.string_map(meta, "labels"));
  out.annotations = k8s_escape_html(dec.string_map(meta, "annotations"));
}

k8s_status unrecognized(std::string_view why, std::string_view body) {
  return k8s_bad_request(
    fmt::format("the object provided is unrecognized (must be of type Lease): "
                "couldn't get version/kind; json parse error: {} ({})",
                why, summarize(body)));
}

// Checks kind and apiVersion (missing ones default to the URL's).
std::optional<k8s_status> check_type(const rj::Value& doc,
                                     std::string_view body) {
  std::string kind{k8s_lease_kind};
  std::string api_version{k8s_lease_api_version};
  for (auto [key, dst] :
       {std::pair{"kind", &kind}, std::pair{"apiVersion", &api_version}}) {
    auto it = doc.FindMember(key);
    if (it == doc.MemberEnd() || it->value.IsNull())
      continue;
    if (!it->value.IsString())
      return unrecognized(fmt::format("json: cannot unmarshal {} into Go "
                                      "struct field .{} of type string",
                                      json_kind(it->value), key),
                          body);
    if (it->value.GetStringLength() > 0)
      *dst = view(it->value);
  }
  auto slash = api_version.find('/');
  auto version
    = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  bool our_group
    = api_version.rfind(fmt::format("{}/", k8s_lease_group), 0) == 0;
  if (kind != k8s_lease_kind || !our_group)
    return k8s_bad_request(fmt::format(
      "{} in version \"{}\" cannot be handled as a Lease: no kind \"{}\" is "
      "registered for version \"{}\" in scheme "
      "\"pkg/api/legacyscheme/scheme.go:30\"",
      kind, version, kind, api_version));
  if (api_version != k8s_lease_api_version)
    return k8s_bad_request(fmt::format("the API version in the data ({}) does "
                                       "not match the expected API version "
                                       "({})",
                                       api_version, k8s_lease_api_version));
  return std::nullopt;
}

} // namespace

std::variant<k8s_lease_body, k8s_status>
k8s_decode_lease(std::string_view body) {
  rj::Document doc;
  doc.Parse<parse_flags>(body.data(), body.size());
  if (doc.HasParseError())
    return unrecognized(go_syntax_error(doc, body), body);
  if (!doc.IsObject())
    return unrecognized(fmt::format("json: cannot unmarshal {} into Go value "
                                    "of type {}",
                                    doc.IsNull() ? "null" : json_kind(doc),
                                    find_kind_type),
                        body);
  if (auto bad = check_type(doc, body))
    return *bad;
  go_decoder dec;
  k8s_lease_body out;
  auto meta = doc.FindMember("metadata");
  if (meta != doc.MemberEnd() && !meta->value.IsNull()) {
    if (meta->value.IsObject())
      decode_metadata(dec, meta->value, out);
    else
      dec.type_error(meta->value, "Lease", "metadata", "v1.ObjectMeta");
  }
  auto spec = doc.FindMember("spec");
  if (spec != doc.MemberEnd() && !spec->value.IsNull()) {
    if (spec->value.IsObject())
      decode_spec(dec, spec->value, out);
    else
      dec.type_error(spec->value, "Lease", "spec", "v1.LeaseSpec");
  }
  if (dec.failed())
    return k8s_bad_request(fmt::format("Lease in version \"v1\" cannot be "
                                       "handled as a Lease: {}",
                                       dec.error()));
  return out;
}

std::string k8s_lease::json() const {
  rj::StringBuffer buf;
  json_writer w{buf};
  auto put = [&](const char* key, const std::string& v) {
    put_string(w, key, v.empty() ? std::nullopt : std::optional{v});
  };
  w.StartObject();
  put("kind", std::string{k8s_lease_kind});
  put("apiVersion", std::string{k8s_lease_api_version});
  w.Key("metadata");
  w.StartObject();
  put("name", name);
  put("namespace", ns);
  put("uid", uid);
  put("resourceVersion", resource_version);
  put("creationTimestamp", creation_timestamp);
  put_raw(w, "labels", labels);
  put_raw(w, "annotations", annotations);
  w.EndObject();
  put_raw(w, "spec", spec_json);
  w.EndObject();
  return k8s_escape_html(buf.GetString());
}

std::string k8s_render_lease_list(const std::vector<const k8s_lease*>& items,
                                  std::string_view resource_version) {
  // Items are objects without kind and apiVersion; cut them from json().
  std::string out = fmt::format(
    R"({{"kind":"LeaseList","apiVersion":"{}","metadata":{{"resourceVersion":"{}"}},"items":[)",
    k8s_lease_api_version, resource_version);
  const auto type_prefix = fmt::format(R"({{"kind":"{}","apiVersion":"{}",)",
                                       k8s_lease_kind, k8s_lease_api_version);
  for (size_t i = 0; i < items.size(); ++i) {
    auto one = items[i]->json();
    out
      += (i > 0 ? "," : "") + std::string{"{"} + one.substr(type_prefix.size());
  }
  return out + "]}";
}

std::variant<k8s_delete_preconditions, k8s_status>
k8s_decode_delete_options(std::string_view body) {
  k8s_delete_preconditions out;
  if (body.empty())
    return out;
  rj::Document doc;
  doc.Parse<parse_flags>(body.data(), body.size());
  if (doc.HasParseError())
    return k8s_unknown_error(
      fmt::format("couldn't get version/kind; json parse error: {}",
                  go_syntax_error(doc, body)));
  if (!doc.IsObject())
    return k8s_unknown_error(
      fmt::format("couldn't get version/kind; json parse error: json: cannot "
                  "unmarshal {} into Go value of type {}",
                  json_kind(doc), find_kind_type));
  auto pre = doc.FindMember("preconditions");
  if (pre == doc.MemberEnd() || !pre->value.IsObject())
    return out;
  for (auto [key, dst] :
       {std::pair{"uid", &out.uid},
        std::pair{"resourceVersion", &out.resource_version}}) {
    auto it = pre->value.FindMember(key);
    if (it != pre->value.MemberEnd() && it->value.IsString())
      *dst = std::string{view(it->value)};
  }
  return out;
}

namespace {

// RFC 7386 MergePatch(target, patch), in place.
void merge_into(rj::Value& target, const rj::Value& patch,
                rj::Document::AllocatorType& alloc) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  if (!target.IsObject())
    target.SetObject();
  for (auto& m : patch.GetObject()) {
    auto it = target.FindMember(m.name);
    if (m.value.IsNull()) {
      if (it != target.MemberEnd())
        target.EraseMember(it);
      continue;
    }
    if (it == target.MemberEnd()) {
      rj::Value key{m.name, alloc};
      rj::Value empty{rj::kNullType};
      target.AddMember(key, empty, alloc);
      it = target.FindMember(m.name);
    }
    merge_into(it->value, m.value, alloc);
  }
}

} // namespace

std::variant<std::string, k8s_status> k8s_merge_patch(std::string_view target,
                                                      std::string_view patch) {
  rj::Document doc;
  doc.Parse<parse_flags>(target.data(), target.size());
  rj::Document p;
  p.Parse<parse_flags>(patch.data(), patch.size());
  if (p.HasParseError() || doc.HasParseError())
    return k8s_bad_request("Invalid JSON Patch");
  merge_into(doc, p, doc.GetAllocator());
  return stringify(doc);
}

} // namespace troupe::test
