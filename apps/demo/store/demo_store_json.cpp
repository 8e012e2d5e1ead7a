// The store's JSON: parsing requests (errors name the field) and rendering
// answers and log lines (demo_store_core.hpp).

#include <ctime>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "store/demo_store_core.hpp"

namespace troupe::demo::store {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

runtime::error bad_request(std::string message) {
  return runtime::make_error(errc::bad_request, std::move(message));
}

runtime::error bad_field(std::string_view name, std::string_view fault) {
  return bad_request(fmt::format("field \"{}\": {}", name, fault));
}

// The body as a JSON object, or an error naming what is wrong with it.
runtime::expected<rapidjson::Document> parse_object(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError())
    return bad_request(fmt::format(
      "the body is not JSON: {} (at byte {})",
      rapidjson::GetParseError_En(doc.GetParseError()), doc.GetErrorOffset()));
  if (!doc.IsObject())
    return bad_request("the body must be a JSON object");
  return doc;
}

const rapidjson::Value* member(const rapidjson::Document& doc,
                               const char* name) {
  auto i = doc.FindMember(name);
  return i == doc.MemberEnd() ? nullptr : &i->value;
}

runtime::error get_uint(const rapidjson::Document& doc, const char* name,
                        uint64_t& out) {
  auto* v = member(doc, name);
  if (v == nullptr)
    return bad_field(name, "missing");
  if (!v->IsUint64())
    return bad_field(name, "must be an unsigned integer");
  out = v->GetUint64();
  return {};
}

runtime::error get_string(const rapidjson::Document& doc, const char* name,
                          size_t max_len, std::string& out) {
  auto* v = member(doc, name);
  if (v == nullptr)
    return bad_field(name, "missing");
  if (!v->IsString())
    return bad_field(name, "must be a string");
  if (v->GetStringLength() == 0 || v->GetStringLength() > max_len)
    return bad_field(name, fmt::format("must be 1 to {} bytes long (is {})",
                                       max_len, v->GetStringLength()));
  out.assign(v->GetString(), v->GetStringLength());
  return {};
}

void put(json_writer& w, std::string_view x) {
  w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
}

template <class F>
std::string render(F&& f) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  f(w);
  return std::string{buf.GetString(), buf.GetSize()};
}

// `{"balance":B,"seq":S}`.
void put_account(json_writer& w, const account_state& a) {
  w.StartObject();
  w.Key("balance");
  w.Int64(a.balance);
  w.Key("seq");
  w.Uint64(a.seq);
  w.EndObject();
}

void put_time(json_writer& w, const log_time& at) {
  w.Key("mono_ns");
  w.Int64(at.mono_ns);
  w.Key("wall");
  put(w, format_wall_time(at.wall));
}

} // namespace

runtime::expected<ledger_record> parse_ledger_record(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc)
    return doc.error();
  ledger_record r;
  if (auto err = get_uint(*doc, "token", r.token))
    return err;
  if (auto err = get_uint(*doc, "seq", r.seq))
    return err;
  if (auto err = get_string(*doc, "owner", 256, r.owner))
    return err;
  return r;
}

runtime::expected<deposit_request>
parse_deposit_request(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc)
    return doc.error();
  deposit_request d;
  if (auto err = get_string(*doc, "deposit", 128, d.deposit))
    return err;
  auto* amount = member(*doc, "amount");
  if (amount == nullptr)
    return bad_field("amount", "missing");
  if (!amount->IsInt64() || amount->GetInt64() < 1
      || amount->GetInt64() > max_deposit_amount)
    return bad_field("amount", fmt::format("must be an integer from 1 to {}",
                                           max_deposit_amount));
  d.amount = amount->GetInt64();
  if (auto err = get_uint(*doc, "expected_seq", d.expected_seq))
    return err;
  if (member(*doc, "writer") != nullptr)
    if (auto err = get_string(*doc, "writer", 256, d.writer))
      return err;
  return d;
}

std::string format_wall_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(ms / 1000);
  auto rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    secs -= 1;
  }
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, rem);
}

std::string format_ledger_line(const log_time& at, const ledger_record& r,
                               const ledger_decision& d) {
  return render([&](json_writer& w) {
           w.StartObject();
           put_time(w, at);
           w.Key("token");
           w.Uint64(r.token);
           w.Key("seq");
           w.Uint64(r.seq);
           w.Key("owner");
           put(w, r.owner);
           w.Key("accepted");
           w.Bool(d.accepted);
           w.Key("highest");
           if (d.highest_before)
             w.Uint64(*d.highest_before);
           else
             w.Null();
           if (!d.accepted) {
             w.Key("reason");
             put(w, d.reason);
           }
           w.EndObject();
         })
         + '\n';
}

std::string format_journal_line(const log_time& at, const std::string& account,
                                const deposit_request& d,
                                const deposit_result& r) {
  return render([&](json_writer& w) {
           w.StartObject();
           put_time(w, at);
           w.Key("account");
           put(w, account);
           w.Key("deposit");
           put(w, d.deposit);
           w.Key("amount");
           w.Int64(d.amount);
           w.Key("expected_seq");
           w.Uint64(d.expected_seq);
           w.Key("outcome");
           w.String(to_string(r.outcome));
           w.Key("seq");
           w.Uint64(r.account.seq);
           w.Key("balance");
           w.Int64(r.account.balance);
           if (!d.writer.empty()) {
             w.Key("writer");
             put(w, d.writer);
           }
           if (r.outcome != deposit_outcome::applied) {
             w.Key("reason");
             put(w, r.reason);
           }
           w.EndObject();
         })
         + '\n';
}

std::string render_ledger_answer(const ledger_decision& d) {
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("accepted");
    w.Bool(d.accepted);
    if (!d.accepted) {
      w.Key("reason");
      put(w, d.reason);
      w.Key("highest");
      w.Uint64(d.highest_before.value_or(0));
    }
    w.EndObject();
  });
}

std::string render_deposit_answer(const deposit_result& r) {
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("seq");
    w.Uint64(r.account.seq);
    w.Key("balance");
    w.Int64(r.account.balance);
    if (r.outcome != deposit_outcome::applied) {
      w.Key("outcome");
      w.String(to_string(r.outcome));
      w.Key("reason");
      put(w, r.reason);
      w.Key("error");
      put(w, r.reason);
    }
    w.EndObject();
  });
}

std::string render_account(const account_state& a) {
  return render([&](json_writer& w) { put_account(w, a); });
}

std::string render_summary(const fenced_ledger& l, const account_journal& j) {
  auto t = j.totals();
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("ledger");
    w.StartObject();
    w.Key("accepted");
    w.Uint64(l.accepted());
    w.Key("rejected");
    w.Uint64(l.rejected());
    w.Key("highest_token");
    if (auto h = l.highest_token())
      w.Uint64(*h);
    else
      w.Null();
    w.EndObject();
    w.Key("journal");
    w.StartObject();
    w.Key("accounts");
    w.Uint64(t.accounts);
    w.Key("applied");
    w.Uint64(t.applied);
    w.Key("conflicts");
    w.Uint64(t.conflicts);
    w.Key("duplicates");
    w.Uint64(t.duplicates);
    w.Key("balance_sum");
    w.Int64(t.balance_sum);
    w.EndObject();
    w.Key("accounts");
    w.StartObject();
    for (auto& [id, acc] : j.accounts()) {
      put(w, id);
      put_account(w, acc);
    }
    w.EndObject();
    w.EndObject();
  });
}

std::string render_error(std::string_view what) {
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("error");
    put(w, what);
    w.EndObject();
  });
}

} // namespace troupe::demo::store
