#include "failover_measure.hpp"

#include <rapidjson/document.h>

namespace troupe::demo {

std::optional<int64_t> first_takeover_ns(std::string_view ledger_jsonl,
                                         uint64_t victim_token,
                                         int64_t kill_ns) {
  std::optional<int64_t> first;
  while (!ledger_jsonl.empty()) {
    auto nl = ledger_jsonl.find('\n');
    auto line = ledger_jsonl.substr(0, nl);
    ledger_jsonl = nl == std::string_view::npos ? std::string_view{}
                                                : ledger_jsonl.substr(nl + 1);
    rapidjson::Document doc;
    doc.Parse(line.data(), line.size());
    if (doc.HasParseError() || !doc.IsObject())
      continue;
    auto mono = doc.FindMember("mono_ns");
    auto token = doc.FindMember("token");
    auto accepted = doc.FindMember("accepted");
    if (mono == doc.MemberEnd() || !mono->value.IsInt64()
        || token == doc.MemberEnd() || !token->value.IsUint64()
        || accepted == doc.MemberEnd() || !accepted->value.IsBool())
      continue;
    auto t = mono->value.GetInt64();
    if (accepted->value.GetBool() && token->value.GetUint64() > victim_token
        && t >= kill_ns && (!first || t < *first))
      first = t;
  }
  return first;
}

} // namespace troupe::demo
