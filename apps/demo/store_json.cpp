#include "store_json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace troupe::demo {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put_string(json_writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

std::optional<rapidjson::Document> parse_object(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject())
    return std::nullopt;
  return doc;
}

} // namespace

std::string ledger_body(uint64_t token, uint64_t seq, std::string_view owner) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("token");
  w.Uint64(token);
  w.Key("seq");
  w.Uint64(seq);
  put_string(w, "owner", owner);
  w.EndObject();
  return buf.GetString();
}

std::string deposit_body(std::string_view deposit, int64_t amount,
                         uint64_t expected_seq, std::string_view writer) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_string(w, "deposit", deposit);
  w.Key("amount");
  w.Int64(amount);
  w.Key("expected_seq");
  w.Uint64(expected_seq);
  if (!writer.empty())
    put_string(w, "writer", writer);
  w.EndObject();
  return buf.GetString();
}

std::optional<account_state> parse_account_state(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc)
    return std::nullopt;
  auto balance = doc->FindMember("balance");
  auto seq = doc->FindMember("seq");
  if (balance == doc->MemberEnd() || !balance->value.IsInt64()
      || seq == doc->MemberEnd() || !seq->value.IsUint64())
    return std::nullopt;
  return account_state{balance->value.GetInt64(), seq->value.GetUint64()};
}

std::string store_outcome(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc)
    return {};
  auto i = doc->FindMember("outcome");
  return i != doc->MemberEnd() && i->value.IsString() ? i->value.GetString()
                                                      : std::string{};
}

std::pair<deposit_verdict, std::optional<account_state>>
judge_deposit_answer(unsigned status, std::string_view body) {
  auto st = parse_account_state(body);
  if (status == 200 && st)
    return {deposit_verdict::persisted, st};
  if (status == 409 && st)
    return {store_outcome(body) == "duplicate" ? deposit_verdict::duplicate
                                               : deposit_verdict::conflict,
            st};
  return {deposit_verdict::unknown, std::nullopt};
}

std::string deposit_answer(const account_state& st) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("seq");
  w.Uint64(st.seq);
  w.Key("balance");
  w.Int64(st.balance);
  w.EndObject();
  return buf.GetString();
}

std::string error_body(std::string_view why) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_string(w, "error", why);
  w.EndObject();
  return buf.GetString();
}

std::string store_reason(std::string_view body) {
  if (auto doc = parse_object(body))
    for (const char* key : {"reason", "error"}) {
      auto i = doc->FindMember(key);
      if (i != doc->MemberEnd() && i->value.IsString())
        return i->value.GetString();
    }
  if (body.empty())
    return "empty answer";
  return std::string{body.substr(0, 200)};
}

std::string history_line(int64_t mono_ns, std::string_view node,
                         std::string_view address, std::string_view event,
                         std::initializer_list<history_field> fields) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("mono_ns");
  w.Int64(mono_ns);
  put_string(w, "node", node);
  put_string(w, "address", address);
  put_string(w, "event", event);
  for (const auto& f : fields) {
    if (const auto* text = std::get_if<std::string_view>(&f.value))
      put_string(w, f.key, *text);
    else {
      w.Key(f.key.data(), static_cast<rapidjson::SizeType>(f.key.size()));
      w.Uint64(std::get<uint64_t>(f.value));
    }
  }
  w.EndObject();
  std::string line = buf.GetString();
  line += '\n';
  return line;
}

} // namespace troupe::demo
