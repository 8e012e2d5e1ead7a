#include "failover_measure.hpp"

#include <rapidjson/document.h>

#include "client/client_log.hpp"
#include "troupe/sharding/shard_id.hpp"

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
    doc.Parse<rapidjson::kParseIterativeFlag>(line.data(), line.size());
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

std::optional<int64_t> first_victim_ack_ns(
  std::string_view client_log, const std::set<std::string>& victim_shards,
  uint32_t number_of_shards, int64_t kill_ns, std::string_view victim_api) {
  std::optional<int64_t> first;
  // Deposits first sent at or after the kill: the killed node cannot have
  // answered them (an answer it sent just before the kill may be logged
  // just after it).
  std::set<std::string> sent_after;
  while (!client_log.empty()) {
    auto nl = client_log.find('\n');
    auto line = client_log.substr(0, nl);
    client_log = nl == std::string_view::npos ? std::string_view{}
                                              : client_log.substr(nl + 1);
    auto ev = client::parse_client_event(line);
    if (!ev || ev->mono_ns < kill_ns)
      continue;
    if (ev->kind == client::client_event_kind::sent) {
      sent_after.insert(ev->deposit);
      continue;
    }
    if (ev->kind != client::client_event_kind::acked
        || sent_after.count(ev->deposit) == 0
        || (!victim_api.empty() && ev->node == victim_api)
        || (first && ev->mono_ns >= *first))
      continue;
    auto shard = sharding::default_shard_id(ev->account, number_of_shards);
    if (shard && victim_shards.count(*shard) > 0)
      first = ev->mono_ns;
  }
  return first;
}

} // namespace troupe::demo
