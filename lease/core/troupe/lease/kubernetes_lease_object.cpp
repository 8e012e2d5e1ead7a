#include "troupe/lease/kubernetes_lease_object.hpp"

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/encodings.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "troupe/lease/errc.hpp"

namespace troupe::lease {

using runtime::make_error;

namespace {

// Lease objects are small (about 1 KiB with managedFields); anything far
// larger is not a Lease.
constexpr size_t max_json_bytes = 1024 * 1024;

constexpr unsigned parse_flags
  = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

runtime::error bad(std::string_view what, std::string_view why) {
  return make_error(errc::backend_protocol_violation,
                    fmt::format("{}: {}", what, why));
}

// True if `s` is well-formed UTF-8. kParseValidateEncodingFlag checks the raw
// bytes but RapidJSON 1.1 decodes a lone low surrogate escape (\udc00 to
// \udfff) into bytes that are not UTF-8; writing them back would give the
// API server a body it cannot parse.
bool valid_utf8(const rapidjson::Value& s) {
  rapidjson::StringStream in{s.GetString()};
  const auto* end = s.GetString() + s.GetStringLength();
  struct null_out {
    void Put(char) {}
  } out;
  while (in.src_ != end)
    if (!rapidjson::UTF8<>::Validate(in, out))
      return false;
  return true;
}

// True if every string (key or value) in `root` is UTF-8. Iterative: depth
// is bounded only by the size limit.
bool all_strings_utf8(const rapidjson::Value& root) {
  std::vector<const rapidjson::Value*> todo{&root};
  while (!todo.empty()) {
    const auto* v = todo.back();
    todo.pop_back();
    if (v->IsString()) {
      if (!valid_utf8(*v))
        return false;
    } else if (v->IsObject()) {
      for (const auto& m : v->GetObject()) {
        if (!valid_utf8(m.name))
          return false;
        todo.push_back(&m.value);
      }
    } else if (v->IsArray()) {
      for (const auto& e : v->GetArray())
        todo.push_back(&e);
    }
  }
  return true;
}

runtime::error parse_document(rapidjson::Document& doc, std::string_view json,
                              std::string_view what) {
  if (json.size() > max_json_bytes)
    return bad(what, fmt::format("body of {} bytes exceeds {} bytes",
                                 json.size(), max_json_bytes));
  doc.Parse<parse_flags>(json.data(), json.size());
  if (doc.HasParseError())
    return bad(
      what, fmt::format("malformed JSON at offset {}: {}", doc.GetErrorOffset(),
                        rapidjson::GetParseError_En(doc.GetParseError())));
  if (!doc.IsObject())
    return bad(what, "not a JSON object");
  if (!all_strings_utf8(doc))
    return bad(what, "a string escapes a lone UTF-16 surrogate (not UTF-8)");
  return {};
}

const rapidjson::Value* member(const rapidjson::Value& obj,
                               std::string_view key) {
  if (!obj.IsObject())
    return nullptr;
  auto i = obj.FindMember(
    rapidjson::Value{rapidjson::StringRef(key.data(), key.size())});
  return i == obj.MemberEnd() ? nullptr : &i->value;
}

// An optional string field: absent or null -> nullopt; another type -> error.
runtime::error opt_string(const rapidjson::Value& obj, std::string_view key,
                          std::string_view path,
                          std::optional<std::string>& out) {
  auto v = member(obj, key);
  if (v == nullptr || v->IsNull())
    return {};
  if (!v->IsString())
    return bad("Lease", fmt::format("{} is not a string", path));
  out.emplace(v->GetString(), v->GetStringLength());
  return {};
}

// An optional int32 field that must not be negative.
runtime::error opt_count(const rapidjson::Value& obj, std::string_view key,
                         std::string_view path, std::optional<int64_t>& out) {
  auto v = member(obj, key);
  if (v == nullptr || v->IsNull())
    return {};
  if (!v->IsInt64())
    return bad("Lease", fmt::format("{} is not an integer", path));
  auto n = v->GetInt64();
  if (n < 0 || n > std::numeric_limits<int32_t>::max())
    return bad("Lease", fmt::format("{} = {} is outside 0..{}", path, n,
                                    std::numeric_limits<int32_t>::max()));
  out = n;
  return {};
}

uint64_t parse_hex(std::string_view text) {
  if (text.empty() || text.size() > 16)
    return 0;
  uint64_t x = 0;
  for (char c : text) {
    int d = 0;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return 0;
    x = x * 16 + static_cast<uint64_t>(d);
  }
  return x;
}

// The member `key` of `obj` for writing, or nullptr. (Through the const
// lookup: comparing RapidJSON's non-const member iterators is ambiguous in
// C++20, and clang warns.)
rapidjson::Value* mutable_member(rapidjson::Value& obj, std::string_view key) {
  return const_cast<rapidjson::Value*>(
    member(static_cast<const rapidjson::Value&>(obj), key));
}

rapidjson::Value& add_member(rapidjson::Value& obj, std::string_view key,
                             rapidjson::Value value,
                             rapidjson::Document::AllocatorType& alloc) {
  obj.AddMember(rapidjson::Value{key.data(),
                                 static_cast<rapidjson::SizeType>(key.size()),
                                 alloc},
                std::move(value), alloc);
  return (obj.MemberEnd() - 1)->value;
}

void set_string(rapidjson::Value& obj, std::string_view key,
                std::string_view value,
                rapidjson::Document::AllocatorType& alloc) {
  rapidjson::Value v{value.data(),
                     static_cast<rapidjson::SizeType>(value.size()), alloc};
  if (auto* m = mutable_member(obj, key)) {
    *m = std::move(v);
    return;
  }
  add_member(obj, key, std::move(v), alloc);
}

void set_int(rapidjson::Value& obj, std::string_view key, int64_t value,
             rapidjson::Document::AllocatorType& alloc) {
  if (auto* m = mutable_member(obj, key)) {
    m->SetInt64(value);
    return;
  }
  add_member(obj, key, rapidjson::Value{value}, alloc);
}

// The member `key` of `obj` as an object, created (or replaced when it has
// another type) as needed.
rapidjson::Value& object_member(rapidjson::Value& obj, std::string_view key,
                                rapidjson::Document::AllocatorType& alloc) {
  auto* m = mutable_member(obj, key);
  if (m == nullptr)
    return add_member(obj, key, rapidjson::Value{rapidjson::kObjectType},
                      alloc);
  if (!m->IsObject())
    m->SetObject();
  return *m;
}

} // namespace

runtime::expected<kubernetes_lease_object>
parse_kubernetes_lease(std::string_view json) {
  rapidjson::Document doc;
  if (auto err = parse_document(doc, json, "Lease"))
    return err;
  auto kind = member(doc, "kind");
  if (kind != nullptr
      && !(kind->IsString() && kind->GetString() == std::string_view{"Lease"}))
    return bad("Lease", "kind is not \"Lease\"");
  auto meta = member(doc, "metadata");
  if (meta == nullptr || !meta->IsObject())
    return bad("Lease", "metadata is missing or not an object");
  kubernetes_lease_object x;
  std::optional<std::string> s;
  if (auto err = opt_string(*meta, "name", "metadata.name", s))
    return err;
  if (!s || s->empty())
    return bad("Lease", "metadata.name is missing");
  x.name = std::move(*s);
  s.reset();
  if (auto err
      = opt_string(*meta, "resourceVersion", "metadata.resourceVersion", s))
    return err;
  if (!s || s->empty())
    return bad("Lease", "metadata.resourceVersion is missing");
  x.resource_version = std::move(*s);
  s.reset();
  if (auto err = opt_string(*meta, "namespace", "metadata.namespace", s))
    return err;
  x.namespace_name = s.value_or(std::string{});
  s.reset();
  if (auto err = opt_string(*meta, "uid", "metadata.uid", s))
    return err;
  x.uid = s.value_or(std::string{});
  if (auto ann = member(*meta, "annotations");
      ann != nullptr && ann->IsObject())
    if (auto acq = member(*ann, kubernetes_acquisition_annotation);
        acq != nullptr && acq->IsString())
      x.acquisition
        = parse_hex(std::string_view{acq->GetString(), acq->GetStringLength()});
  auto spec = member(doc, "spec");
  if (spec != nullptr && !spec->IsNull()) {
    if (!spec->IsObject())
      return bad("Lease", "spec is not an object");
    if (auto err = opt_string(*spec, "holderIdentity", "spec.holderIdentity",
                              x.holder_identity))
      return err;
    if (auto err
        = opt_count(*spec, "leaseDurationSeconds", "spec.leaseDurationSeconds",
                    x.lease_duration_seconds))
      return err;
    if (auto err = opt_count(*spec, "leaseTransitions", "spec.leaseTransitions",
                             x.lease_transitions))
      return err;
    if (auto err
        = opt_string(*spec, "acquireTime", "spec.acquireTime", x.acquire_time))
      return err;
    if (auto err
        = opt_string(*spec, "renewTime", "spec.renewTime", x.renew_time))
      return err;
  }
  x.raw.assign(json.data(), json.size());
  return x;
}

runtime::expected<std::string>
render_kubernetes_lease(std::string_view base,
                        const kubernetes_lease_write& w) {
  rapidjson::Document doc;
  if (base.empty()) {
    doc.SetObject();
  } else if (auto err = parse_document(doc, base, "Lease")) {
    return err;
  }
  auto& alloc = doc.GetAllocator();
  set_string(doc, "apiVersion", "coordination.k8s.io/v1", alloc);
  set_string(doc, "kind", "Lease", alloc);
  auto& meta = object_member(doc, "metadata", alloc);
  set_string(meta, "name", w.name, alloc);
  set_string(meta, "namespace", w.namespace_name, alloc);
  meta.RemoveMember("managedFields");
  if (w.resource_version.empty())
    meta.RemoveMember("resourceVersion");
  else
    set_string(meta, "resourceVersion", w.resource_version, alloc);
  auto& ann = object_member(meta, "annotations", alloc);
  auto key = rapidjson::StringRef(kubernetes_acquisition_annotation.data(),
                                  kubernetes_acquisition_annotation.size());
  if (w.acquisition == 0)
    ann.RemoveMember(key);
  else
    set_string(ann, kubernetes_acquisition_annotation,
               fmt::format("{:x}", w.acquisition), alloc);
  if (ann.MemberCount() == 0)
    meta.RemoveMember("annotations");
  auto& spec = object_member(doc, "spec", alloc);
  set_string(spec, "holderIdentity", w.holder_identity, alloc);
  set_int(spec, "leaseDurationSeconds", w.lease_duration_seconds, alloc);
  set_int(spec, "leaseTransitions", w.lease_transitions, alloc);
  if (!w.acquire_time.empty())
    set_string(spec, "acquireTime", w.acquire_time, alloc);
  if (!w.renew_time.empty())
    set_string(spec, "renewTime", w.renew_time, alloc);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer{buf};
  doc.Accept(writer);
  return std::string{buf.GetString(), buf.GetSize()};
}

std::string format_micro_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  auto secs = us / 1'000'000;
  auto frac = us % 1'000'000;
  if (frac < 0) {
    frac += 1'000'000;
    secs -= 1;
  }
  auto tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, frac);
}

runtime::expected<std::chrono::system_clock::time_point>
parse_micro_time(std::string_view text) {
  // 2006-01-02T15:04:05.000000Z07:00 -> 27 characters with Z, 32 with an
  // offset.
  auto fail = [&](std::string_view why) {
    return bad("MicroTime", fmt::format("\"{}\": {}", text.substr(0, 40), why));
  };
  if (text.size() != 27 && text.size() != 32)
    return fail("expected YYYY-MM-DDTHH:MM:SS.ffffff followed by Z or "
                "+hh:mm");
  auto digits = [&](size_t pos, size_t n, int& out) {
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (text[i] < '0' || text[i] > '9')
        return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year, mon, day, hour, min, sec, frac;
  if (!digits(0, 4, year) || text[4] != '-' || !digits(5, 2, mon)
      || text[7] != '-' || !digits(8, 2, day) || text[10] != 'T'
      || !digits(11, 2, hour) || text[13] != ':' || !digits(14, 2, min)
      || text[16] != ':' || !digits(17, 2, sec) || text[19] != '.'
      || !digits(20, 6, frac))
    return fail("not in the layout YYYY-MM-DDTHH:MM:SS.ffffff");
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59
      || sec > 60)
    return fail("a date or time field is out of range");
  // system_clock counts nanoseconds in 64 bits: about 1678..2262.
  if (year < 1678 || year > 2261)
    return fail("the year is outside 1678..2261");
  int offset_min = 0;
  if (text.size() == 27) {
    if (text[26] != 'Z')
      return fail("expected Z after the fraction");
  } else {
    int oh, om;
    if ((text[26] != '+' && text[26] != '-') || !digits(27, 2, oh)
        || text[29] != ':' || !digits(30, 2, om) || oh > 23 || om > 59)
      return fail("bad zone offset");
    offset_min = (oh * 60 + om) * (text[26] == '-' ? -1 : 1);
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  auto secs = timegm(&tm);
  using namespace std::chrono;
  return system_clock::time_point{duration_cast<system_clock::duration>(
    seconds{secs} - minutes{offset_min} + microseconds{frac})};
}

runtime::error validate_dns1123_subdomain(std::string_view name,
                                          std::string_view what) {
  auto fail = [&](std::string why) {
    return make_error(errc::invalid_settings,
                      fmt::format("{} \"{}\" is not a valid Kubernetes object "
                                  "name (DNS-1123 subdomain): {}",
                                  what, name.substr(0, 300), why));
  };
  if (name.empty())
    return fail("it is empty");
  if (name.size() > 253)
    return fail(fmt::format("it has {} characters, at most 253 are allowed",
                            name.size()));
  auto alnum
    = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  size_t label_start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      if (i == label_start)
        return fail("it has an empty label (\"..\", or a leading or "
                    "trailing dot)");
      if (!alnum(name[label_start]) || !alnum(name[i - 1]))
        return fail("each dot-separated part must start and end with a "
                    "lowercase letter or digit");
      label_start = i + 1;
      continue;
    }
    char c = name[i];
    if (!alnum(c) && c != '-') {
      if (c >= 'A' && c <= 'Z')
        return fail(fmt::format("upper-case '{}' at position {} (only "
                                "lowercase letters, digits, '-' and '.')",
                                c, i));
      return fail(
        fmt::format("character {} at position {} (only lowercase "
                    "letters, digits, '-' and '.')",
                    static_cast<unsigned char>(c) < 0x20
                        || static_cast<unsigned char>(c) >= 0x7f
                      ? fmt::format("0x{:02x}", static_cast<unsigned char>(c))
                      : fmt::format("'{}'", c),
                    i));
    }
  }
  return {};
}

void observe(kubernetes_observation& obs, const kubernetes_lease_object& x,
             runtime::timestamp now) {
  if (obs.resource_version != x.resource_version) {
    obs.resource_version = x.resource_version;
    obs.since = now;
  }
}

bool held_by_observation(const kubernetes_lease_object& x,
                         const kubernetes_observation& obs,
                         runtime::timestamp now, runtime::timespan fallback) {
  if (x.holder().empty())
    return false;
  runtime::timespan duration = fallback;
  if (x.lease_duration_seconds && *x.lease_duration_seconds > 0)
    duration = std::chrono::seconds{*x.lease_duration_seconds};
  return now - obs.since < duration;
}

} // namespace troupe::lease
