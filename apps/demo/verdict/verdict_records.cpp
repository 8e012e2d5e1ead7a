// Reading the verdict's three files into entries (verdict_core.hpp).

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "store/demo_store_core.hpp"
#include "verdict/verdict_core.hpp"

namespace troupe::demo::verdict {

namespace {

// A deposit's amount as the store accepts it: 1 to max_deposit_amount
// (so that no sum of a run's deposits overflows an int64).
bool valid_amount(int64_t amount) {
  return amount >= 1 && amount <= store::max_deposit_amount;
}

std::string amount_fault(int64_t amount) {
  return fmt::format("amount {} is outside 1 to {}", amount,
                     store::max_deposit_amount);
}

// Calls `f(line_number, line)` for each non-empty line.
template <class F>
void for_each_line(std::string_view text, F f) {
  for (auto& l : lines_of(text))
    f(l.number, l.text);
}

// Reads named fields of one JSON object line; the first fault is kept.
class fields {
public:
  explicit fields(std::string_view line) {
    doc_.Parse<rapidjson::kParseIterativeFlag>(line.data(), line.size());
    if (doc_.HasParseError())
      fault_ = fmt::format("not JSON ({})",
                           rapidjson::GetParseError_En(doc_.GetParseError()));
    else if (!doc_.IsObject())
      fault_ = "not a JSON object";
  }

  const std::string& fault() const noexcept {
    return fault_;
  }

  template <class T>
  void get(const char* name, T& out) {
    if (!fault_.empty())
      return;
    auto i = doc_.FindMember(name);
    if (i == doc_.MemberEnd()) {
      fault_ = fmt::format("field \"{}\" missing", name);
      return;
    }
    auto& v = i->value;
    bool ok = false;
    if constexpr (std::is_same_v<T, std::string>) {
      if ((ok = v.IsString()))
        out.assign(v.GetString(), v.GetStringLength());
    } else if constexpr (std::is_same_v<T, bool>) {
      if ((ok = v.IsBool()))
        out = v.GetBool();
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      if ((ok = v.IsUint64()))
        out = v.GetUint64();
    } else {
      static_assert(std::is_same_v<T, int64_t>);
      if ((ok = v.IsInt64()))
        out = v.GetInt64();
    }
    if (!ok)
      fault_ = fmt::format("field \"{}\" has the wrong type", name);
  }

private:
  rapidjson::Document doc_;
  std::string fault_;
};

void add_problem(std::vector<std::string>& problems, const char* file,
                 size_t line, std::string_view fault) {
  problems.push_back(fmt::format("{} line {}: {}", file, line, fault));
}

// The entries of a JSON-lines file; `read(f, entry)` reads one entry's
// fields and returns a further fault ("" if none).
template <class Entry, class Read>
std::vector<Entry> parse_jsonl(std::string_view text, const char* file,
                               std::vector<std::string>& problems, Read read) {
  std::vector<Entry> out;
  for_each_line(text, [&](size_t n, std::string_view line) {
    fields f{line};
    Entry e;
    e.line = n;
    auto fault = read(f, e);
    if (fault.empty())
      fault = f.fault();
    if (fault.empty())
      out.push_back(std::move(e));
    else
      add_problem(problems, file, n, fault);
  });
  return out;
}

} // namespace

std::vector<ledger_entry> parse_ledger(std::string_view text,
                                       std::vector<std::string>& problems) {
  return parse_jsonl<ledger_entry>(text, "ledger.jsonl", problems,
                                   [](fields& f, ledger_entry& e) {
                                     f.get("mono_ns", e.mono_ns);
                                     f.get("token", e.token);
                                     f.get("seq", e.seq);
                                     f.get("owner", e.owner);
                                     f.get("accepted", e.accepted);
                                     return std::string{};
                                   });
}

std::vector<journal_entry> parse_journal(std::string_view text,
                                         std::vector<std::string>& problems) {
  return parse_jsonl<journal_entry>(
    text, "journal.jsonl", problems, [](fields& f, journal_entry& e) {
      f.get("mono_ns", e.mono_ns);
      f.get("account", e.account);
      f.get("deposit", e.deposit);
      f.get("amount", e.amount);
      f.get("expected_seq", e.expected_seq);
      f.get("outcome", e.outcome);
      f.get("seq", e.seq);
      f.get("balance", e.balance);
      if (f.fault().empty() && e.outcome != "applied" && e.outcome != "conflict"
          && e.outcome != "duplicate")
        return fmt::format("unknown outcome \"{}\"", e.outcome);
      if (f.fault().empty() && !valid_amount(e.amount))
        return amount_fault(e.amount);
      return std::string{};
    });
}

std::vector<client::client_event>
parse_client_log(std::string_view text, std::vector<std::string>& problems) {
  std::vector<client::client_event> out;
  for_each_line(text, [&](size_t n, std::string_view line) {
    auto ev = client::parse_client_event(line);
    if (ev && ev->amount != 0 && !valid_amount(ev->amount))
      add_problem(problems, "client.log", n, amount_fault(ev->amount));
    else if (ev)
      out.push_back(std::move(*ev));
    else
      add_problem(problems, "client.log", n,
                  fmt::format("malformed: \"{}\"", line.substr(0, 80)));
  });
  return out;
}

std::vector<text_line> lines_of(std::string_view text) {
  std::vector<text_line> out;
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text
      = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (!line.empty())
      out.push_back({number, line, nl == std::string_view::npos});
  }
  return out;
}

} // namespace troupe::demo::verdict
