// Reading JSON-lines files field by field (chaos_json_line.hpp).

#include "chaos_json_line.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

namespace troupe::chaos::detail {

struct json_line::impl {
  rapidjson::Document doc;
};

json_line::json_line(std::string_view line) : impl_(std::make_unique<impl>()) {
  auto& doc = impl_->doc;
  // Iterative: a line of deeply nested brackets would overflow the stack of
  // the recursive parser.
  doc.Parse<rapidjson::kParseIterativeFlag>(line.data(), line.size());
  if (doc.HasParseError())
    fault_ = fmt::format("not JSON ({})",
                         rapidjson::GetParseError_En(doc.GetParseError()));
  else if (!doc.IsObject())
    fault_ = "not a JSON object";
}

json_line::json_line(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

json_line::~json_line() = default;
json_line::json_line(json_line&&) noexcept = default;
json_line& json_line::operator=(json_line&&) noexcept = default;

namespace {

// The value of field `name`, or nullptr with `fault` set (a missing field
// is a fault unless `optional`).
const rapidjson::Value* find(const rapidjson::Document& doc, const char* name,
                             std::string& fault, bool optional = false) {
  if (!fault.empty())
    return nullptr;
  auto i = doc.FindMember(name);
  if (i != doc.MemberEnd())
    return &i->value;
  if (!optional)
    fault = fmt::format("field \"{}\" missing", name);
  return nullptr;
}

// Sets the fault for a field of the wrong type; returns `ok`.
bool typed(bool ok, const char* name, std::string& fault) {
  if (!ok)
    fault = fmt::format("field \"{}\" has the wrong type", name);
  return ok;
}

} // namespace

void json_line::get(const char* name, std::string& out) {
  if (!get_optional(name, out) && fault_.empty())
    fault_ = fmt::format("field \"{}\" missing", name);
}

bool json_line::get_optional(const char* name, std::string& out) {
  auto* v = find(impl_->doc, name, fault_, true);
  if (v == nullptr || !typed(v->IsString(), name, fault_))
    return false;
  out.assign(v->GetString(), v->GetStringLength());
  return true;
}

void json_line::get(const char* name, uint64_t& out) {
  auto* v = find(impl_->doc, name, fault_);
  if (v != nullptr && typed(v->IsUint64(), name, fault_))
    out = v->GetUint64();
}

void json_line::get(const char* name, int64_t& out) {
  auto* v = find(impl_->doc, name, fault_);
  if (v != nullptr && typed(v->IsInt64(), name, fault_))
    out = v->GetInt64();
}

void json_line::get_stamp(const char* name, int64_t& out) {
  get(name, out);
  if (fault_.empty() && out <= 0)
    fault_ = stamp_fault(name, out);
}

std::string stamp_fault(std::string_view name, int64_t value) {
  return fmt::format("{} {} is not a CLOCK_MONOTONIC stamp (> 0)", name, value);
}

void json_line::get(const char* name, std::vector<std::string>& out) {
  auto* v = find(impl_->doc, name, fault_);
  if (v == nullptr || !typed(v->IsArray(), name, fault_))
    return;
  out.clear();
  for (auto& item : v->GetArray()) {
    if (!typed(item.IsString(), name, fault_))
      return;
    out.emplace_back(item.GetString(), item.GetStringLength());
  }
}

void json_line::get(const char* name, bool& out) {
  auto* v = find(impl_->doc, name, fault_);
  if (v != nullptr && typed(v->IsBool(), name, fault_))
    out = v->GetBool();
}

std::vector<json_line> json_line::get_objects(const char* name) {
  std::vector<json_line> out;
  auto* v = find(impl_->doc, name, fault_);
  if (v == nullptr || !typed(v->IsArray(), name, fault_))
    return out;
  for (auto& item : v->GetArray()) {
    if (!item.IsObject()) {
      fault_ = fmt::format("field \"{}\" element {} is not an object", name,
                           out.size());
      return {};
    }
    auto p = std::make_unique<impl>();
    p->doc.CopyFrom(item, p->doc.GetAllocator());
    out.push_back(json_line{std::move(p)});
  }
  return out;
}

bool json_line::has(const char* name) const {
  return impl_->doc.IsObject() && impl_->doc.HasMember(name);
}

std::string word_value(const std::string& x) {
  return printable(x);
}

std::string word_value(uint64_t x) {
  return fmt::format("{}", x);
}

std::string word_value(int64_t x) {
  return fmt::format("{}", x);
}

std::string word_value(const std::vector<std::string>& x) {
  std::vector<std::string> words;
  for (auto& w : x)
    words.push_back(printable(w));
  return fmt::format("[{}]", fmt::join(words, ","));
}

} // namespace troupe::chaos::detail
