#include "troupe/runtime/kubernetes_status.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/text_escape.hpp"

namespace troupe::runtime {

namespace {

// A Status is a few hundred bytes; anything far larger is not one.
constexpr size_t max_status_bytes = 1024 * 1024;

error bad(std::string_view why) {
  return make_error(errc::http_malformed_response,
                    fmt::format("Status: {}", why));
}

const rapidjson::Value* member(const rapidjson::Value& obj,
                               std::string_view key) {
  if (!obj.IsObject())
    return nullptr;
  auto i = obj.FindMember(
    rapidjson::Value{rapidjson::StringRef(key.data(), key.size())});
  return i == obj.MemberEnd() ? nullptr : &i->value;
}

} // namespace

expected<kubernetes_status> parse_kubernetes_status(std::string_view json) {
  if (json.size() > max_status_bytes)
    return bad(fmt::format("body of {} bytes exceeds {} bytes", json.size(),
                           max_status_bytes));
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
  if (kind == nullptr || !kind->IsString()
      || kind->GetString() != std::string_view{"Status"})
    return bad("kind is not \"Status\"");
  kubernetes_status st;
  if (auto code = member(doc, "code"); code != nullptr && code->IsInt64())
    st.code = code->GetInt64();
  if (auto r = member(doc, "reason"); r != nullptr && r->IsString())
    st.reason.assign(r->GetString(), r->GetStringLength());
  if (auto m = member(doc, "message"); m != nullptr && m->IsString())
    st.message.assign(m->GetString(), m->GetStringLength());
  if (auto d = member(doc, "details"); d != nullptr && d->IsObject())
    if (auto ra = member(*d, "retryAfterSeconds");
        ra != nullptr && ra->IsInt64() && ra->GetInt64() > 0)
      st.retry_after
        = std::chrono::seconds{std::min<int64_t>(ra->GetInt64(), 3600)};
  return st;
}

std::string kubernetes_status_text(std::string_view json) {
  auto st = parse_kubernetes_status(json);
  return st ? escape_controls(st->message)
            : fmt::format("(no Status body: {})", st.error().message);
}

} // namespace troupe::runtime
