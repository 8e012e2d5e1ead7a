#include "deposit_query.hpp"

#include <charconv>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "troupe/management/errc.hpp"
#include "troupe/management/router.hpp"

namespace troupe::demo {

namespace {

constexpr int64_t max_amount = 1'000'000'000;

runtime::error bad_query(std::string why) {
  return runtime::make_error(management::errc::invalid_request, std::move(why));
}

} // namespace

bool is_demo_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64)
    return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

runtime::expected<deposit_query> parse_deposit_query(std::string_view target) {
  auto q = target.find('?');
  auto query
    = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
  std::optional<std::string> account, deposit, amount;
  auto form = management::parse_form(query);
  if (form.broken)
    return bad_query(fmt::format("parameter {}: a broken %-escape",
                                 form.broken->substr(0, 32)));
  for (auto& [name, value] : form.fields) {
    std::optional<std::string>* slot = name == "account"   ? &account
                                       : name == "deposit" ? &deposit
                                       : name == "amount"  ? &amount
                                                           : nullptr;
    if (slot == nullptr)
      continue; // unknown parameters are ignored, as most APIs do
    if (*slot)
      return bad_query(fmt::format("parameter {} given twice", name));
    *slot = std::move(value);
  }
  for (auto [name, slot] :
       {std::pair{"account", &account}, std::pair{"deposit", &deposit},
        std::pair{"amount", &amount}})
    if (!*slot)
      return bad_query(fmt::format("parameter {} is missing", name));
  if (!is_demo_id(*account))
    return bad_query("parameter account: not 1 to 64 characters of "
                     "[A-Za-z0-9_.-]");
  if (!is_demo_id(*deposit))
    return bad_query("parameter deposit: not 1 to 64 characters of "
                     "[A-Za-z0-9_.-]");
  deposit_query result{*account, *deposit, 0};
  auto* first = amount->data();
  auto* last = first + amount->size();
  auto [end, ec] = std::from_chars(first, last, result.amount);
  if (ec != std::errc{} || end != last || result.amount < 1
      || result.amount > max_amount)
    return bad_query(
      fmt::format("parameter amount: \"{}\" is not a whole number of cents "
                  "in [1, {}]",
                  amount->substr(0, 32), max_amount));
  return result;
}

} // namespace troupe::demo
