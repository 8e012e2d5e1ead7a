#include "troupe/runtime/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

std::string_view to_string(config_type x) noexcept {
  switch (x) {
    case config_type::string:
      return "string";
    case config_type::integer:
      return "integer";
    case config_type::boolean:
      return "boolean";
    case config_type::real:
      return "real";
    case config_type::duration:
      return "duration";
    case config_type::string_list:
      return "string_list";
    case config_type::secret:
      return "secret";
  }
  return "unknown";
}

namespace {

// The internal parsers return errors whose message is only the reason
// ("unknown unit ..."); the callers add the key, value and origin.
error reason(std::string text) {
  return make_error(errc::bad_config_value, std::move(text));
}

std::string quote(std::string_view text) {
  return fmt::format("{:?}", text);
}

struct duration_unit {
  std::string_view name;
  int64_t ns;
};

// Largest first: render_duration picks the first unit that divides.
constexpr duration_unit duration_units[] = {
  {"h", 3'600'000'000'000}, {"m", 60'000'000'000}, {"s", 1'000'000'000},
  {"ms", 1'000'000},        {"us", 1'000},         {"ns", 1},
};

constexpr std::string_view units_hint = "(expected ns, us, ms, s, m, h)";

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

expected<timespan> duration_of(std::string_view text) {
  constexpr auto max = std::numeric_limits<int64_t>::max();
  if (!text.empty() && text[0] == '-')
    return reason("negative durations are not allowed");
  auto end_of_digits = [&](size_t from) {
    while (from < text.size() && is_digit(text[from]))
      ++from;
    return from;
  };
  auto int_end = end_of_digits(0);
  if (int_end == 0)
    return reason("expected a number with a unit, e.g. \"20s\"");
  auto num_end = int_end;
  std::string_view fraction;
  if (int_end < text.size() && text[int_end] == '.') {
    num_end = end_of_digits(int_end + 1);
    if (num_end == int_end + 1)
      return reason("expected digits after the decimal point");
    fraction = text.substr(int_end + 1, num_end - int_end - 1);
  }
  auto unit_text = text.substr(num_end);
  if (unit_text.empty())
    return reason(fmt::format("missing unit {}", units_hint));
  auto unit = std::find_if(std::begin(duration_units), std::end(duration_units),
                           [&](const auto& u) { return u.name == unit_text; });
  if (unit == std::end(duration_units))
    return reason(
      fmt::format("unknown unit {} {}", quote(unit_text), units_hint));
  auto too_large = [] {
    return reason(
      fmt::format("too large (at most {}h)",
                  std::numeric_limits<int64_t>::max() / duration_units[0].ns));
  };
  int64_t whole = 0;
  auto digits = text.substr(0, int_end);
  auto [ptr, ec]
    = std::from_chars(digits.data(), digits.data() + digits.size(), whole);
  if (ec != std::errc{} || whole > max / unit->ns)
    return too_large();
  int64_t result = whole * unit->ns;
  while (!fraction.empty() && fraction.back() == '0')
    fraction.remove_suffix(1);
  if (!fraction.empty()) {
    // fraction / 10^n units is a whole number of ns iff, after cancelling
    // gcd(unit, 10^n), the rest of 10^n divides the fraction's digits.
    if (fraction.size() > 18)
      return reason("finer than 1ns");
    int64_t digits_value = 0;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(),
                    digits_value);
    int64_t scale = 1;
    for (size_t i = 0; i < fraction.size(); ++i)
      scale *= 10;
    auto g = std::gcd(unit->ns, scale);
    auto den = scale / g;
    if (digits_value % den != 0)
      return reason("finer than 1ns");
    auto part = digits_value / den;
    if (part > (max - result) / (unit->ns / g))
      return too_large();
    result += part * (unit->ns / g);
  }
  return timespan{result};
}

expected<int64_t> integer_of(std::string_view text) {
  int64_t value = 0;
  auto [ptr, ec]
    = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    return reason("out of the range of a 64-bit integer");
  if (ec != std::errc{} || ptr != text.data() + text.size() || text.empty())
    return reason("expected a decimal integer");
  return value;
}

error check_bounds(const config_key& key, int64_t value) {
  if (key.min_integer && value < *key.min_integer)
    return reason(fmt::format("must be at least {}", *key.min_integer));
  if (key.max_integer && value > *key.max_integer)
    return reason(fmt::format("must be at most {}", *key.max_integer));
  return {};
}

error check_bounds(const config_key& key, timespan value) {
  if (key.min_duration && value < *key.min_duration)
    return reason(
      fmt::format("must be at least {}", render_duration(*key.min_duration)));
  return {};
}

expected<bool> boolean_of(std::string_view text) {
  std::string lower{text};
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  for (auto yes : {"true", "1", "yes", "on"})
    if (lower == yes)
      return true;
  for (auto no : {"false", "0", "no", "off"})
    if (lower == no)
      return false;
  return reason("expected true or false (also 1/0, yes/no, on/off)");
}

expected<double> real_of(std::string_view text) {
  double value = 0;
  auto [ptr, ec]
    = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || text.empty())
    return reason("expected a number");
  if (!std::isfinite(value))
    return reason("expected a finite number");
  return value;
}

error check_allowed(const config_key& key, std::string_view value) {
  if (key.allowed.empty()
      || std::find(key.allowed.begin(), key.allowed.end(), value)
           != key.allowed.end())
    return {};
  return reason(
    fmt::format("must be one of: {}", fmt::join(key.allowed, ", ")));
}

error check_items(const std::vector<std::string>& items) {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].empty())
      return reason(fmt::format("item {} of the list is empty", i + 1));
  return {};
}

std::string_view trim(std::string_view x) {
  auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  while (!x.empty() && is_space(x.front()))
    x.remove_prefix(1);
  while (!x.empty() && is_space(x.back()))
    x.remove_suffix(1);
  return x;
}

expected<std::vector<std::string>> list_of(std::string_view text) {
  std::vector<std::string> result;
  if (trim(text).empty())
    return result;
  for (;;) {
    auto comma = text.find(',');
    result.emplace_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
  }
  if (auto err = check_items(result))
    return err;
  return result;
}

template <class T>
expected<config_value> checked(const config_key& key, expected<T> x) {
  if (!x)
    return x.error();
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, timespan>)
    if (auto err = check_bounds(key, *x))
      return err;
  return config_value{std::move(*x)};
}

expected<config_value> value_of_text(const config_key& key,
                                     std::string_view text) {
  switch (key.type) {
    case config_type::string:
      if (auto err = check_allowed(key, text))
        return err;
      return config_value{std::string{text}};
    case config_type::integer:
      return checked(key, integer_of(text));
    case config_type::boolean:
      return checked(key, boolean_of(text));
    case config_type::real:
      return checked(key, real_of(text));
    case config_type::duration:
      if (key.off_allowed && text == "off")
        return config_value{timespan{0}};
      return checked(key, duration_of(text));
    case config_type::string_list:
      return checked(key, list_of(text));
    case config_type::secret:
      return config_value{secret{std::string{text}}};
  }
  return reason("unknown type");
}

// What a file value looks like in an error, and what kind of value it is.
std::string show(const raw_config_value& x) {
  return std::visit(
    [](const auto& v) -> std::string {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::string>)
        return quote(v);
      else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        std::vector<std::string> items;
        for (const auto& item : v)
          items.push_back(quote(item));
        return fmt::format("[{}]", fmt::join(items, ", "));
      } else
        return fmt::format("{}", v);
    },
    x);
}

std::string_view kind_of(const raw_config_value& x) {
  constexpr std::string_view kinds[]
    = {"a string", "an integer", "a boolean", "a real number", "an array"};
  static_assert(std::variant_size_v<raw_config_value> == std::size(kinds));
  return kinds[x.index()];
}

std::string_view expected_kind(const config_key& key) {
  if (key.type == config_type::duration && key.off_allowed)
    return "a string with a unit, e.g. \"20s\", or \"off\"";
  switch (key.type) {
    case config_type::integer:
      return "an integer";
    case config_type::boolean:
      return "true or false";
    case config_type::real:
      return "a number";
    case config_type::duration:
      return "a string with a unit, e.g. \"20s\"";
    case config_type::string_list:
      return "an array of strings or a comma-separated string";
    default:
      return "a string";
  }
}

expected<config_value> value_of_raw(const config_key& key,
                                    const raw_config_value& raw) {
  if (auto* str = std::get_if<std::string>(&raw))
    if (key.type == config_type::string || key.type == config_type::duration
        || key.type == config_type::string_list
        || key.type == config_type::secret)
      return value_of_text(key, *str);
  if (auto* i = std::get_if<int64_t>(&raw)) {
    if (key.type == config_type::integer)
      return checked(key, expected<int64_t>{*i});
    if (key.type == config_type::real)
      return config_value{static_cast<double>(*i)};
  }
  if (auto* b = std::get_if<bool>(&raw); b && key.type == config_type::boolean)
    return config_value{*b};
  if (auto* b = std::get_if<bool>(&raw);
      b && !*b && key.type == config_type::duration && key.off_allowed)
    return config_value{timespan{0}};
  if (auto* d = std::get_if<double>(&raw); d && key.type == config_type::real)
    return checked(key, std::isfinite(*d)
                          ? expected<double>{*d}
                          : expected<double>{reason("expected a finite "
                                                    "number")});
  if (auto* xs = std::get_if<std::vector<std::string>>(&raw);
      xs && key.type == config_type::string_list) {
    if (auto err = check_items(*xs))
      return err;
    return config_value{*xs};
  }
  return reason(
    fmt::format("expected {}, got {}", expected_kind(key), kind_of(raw)));
}

// Optimal string alignment distance (Levenshtein plus neighbour swaps).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      auto cost = a[i - 1] == b[j - 1] ? 0u : 1u;
      d[i][j]
        = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// Dotted snake_case whose segments map back unambiguously from `__`.
bool is_valid_name(std::string_view name) {
  size_t start = 0;
  for (;;) {
    auto dot = name.find('.', start);
    auto seg = name.substr(start, dot - start);
    if (seg.empty() || !(seg.front() >= 'a' && seg.front() <= 'z')
        || seg.back() == '_' || seg.find("__") != std::string_view::npos)
      return false;
    for (char c : seg)
      if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '_'))
        return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

bool is_prefix_of(std::string_view table, std::string_view key) {
  return key.size() > table.size() && key.starts_with(table)
         && key[table.size()] == '.';
}

} // namespace

void config_schema::add(config_key key) {
  TROUPE_ASSERT(is_valid_name(key.name));
  TROUPE_ASSERT(keys_.count(key.name) == 0);
  // A key cannot also be a table of other keys ("lease" and "lease.ttl").
  for (const auto& [name, other] : keys_)
    TROUPE_ASSERT(!is_prefix_of(name, key.name)
                  && !is_prefix_of(key.name, name));
  TROUPE_ASSERT(value_of_text(key, key.default_value));
  auto name = key.name;
  keys_.emplace(std::move(name), std::move(key));
}

const config_key* config_schema::find(std::string_view name) const {
  auto i = keys_.find(name);
  return i != keys_.end() ? &i->second : nullptr;
}

std::vector<const config_key*> config_schema::keys() const {
  std::vector<const config_key*> result;
  for (const auto& [name, key] : keys_)
    result.push_back(&key);
  return result;
}

void config_schema::check_on_join(std::string_view name) {
  auto i = keys_.find(name);
  TROUPE_ASSERT(i != keys_.end());
  TROUPE_ASSERT(i->second.type != config_type::secret);
  i->second.checked_on_join = true;
}

const config_key* config_schema::closest(std::string_view name) const {
  const config_key* best = nullptr;
  size_t best_distance = 3;
  for (const auto& [candidate, key] : keys_)
    if (auto d = edit_distance(name, candidate); d < best_distance) {
      best = &key;
      best_distance = d;
    }
  return best;
}

error unknown_key_error(const config_schema& schema, std::string_view key,
                        const config_origin& origin) {
  auto msg = fmt::format("unknown key {} (from {})", quote(key), origin.text);
  if (auto* hint = schema.closest(key)) {
    msg += fmt::format("; did you mean {}?", hint->name);
  } else if (auto keys = schema.keys(); !key.empty()) {
    // "lease = 5" where lease is a group of keys: point at one of them.
    auto i = std::find_if(keys.begin(), keys.end(), [&](const auto* k) {
      return is_prefix_of(key, k->name);
    });
    if (i != keys.end())
      msg += fmt::format("; {} is a group of keys such as {}", key, (*i)->name);
  }
  return make_error(errc::unknown_config_key, std::move(msg));
}

error bad_value_error(const config_key& key, std::string_view value,
                      const config_origin& origin, std::string_view reason) {
  if (key.type == config_type::secret)
    return make_error(errc::bad_config_value,
                      fmt::format("bad value for {} (from {}): {}", key.name,
                                  origin.text, reason));
  return make_error(errc::bad_config_value,
                    fmt::format("bad value {} for {} (from {}): {}", value,
                                key.name, origin.text, reason));
}

config::config(const config_schema& schema) : schema_(&schema) {
  for (const auto* key : schema.keys()) {
    auto value = value_of_text(*key, key->default_value);
    TROUPE_ASSERT(value);
    values_.emplace(key->name, entry{std::move(*value), config_origin{}});
  }
}

const config_origin& config::origin(std::string_view key) const {
  auto i = values_.find(key);
  TROUPE_ASSERT(i != values_.end());
  return i->second.origin;
}

std::string config::render(std::string_view key) const {
  auto i = values_.find(key);
  TROUPE_ASSERT(i != values_.end());
  auto* decl = schema_->find(key);
  bool off_allowed = decl != nullptr && decl->off_allowed;
  return std::visit(
    [off_allowed](const auto& v) -> std::string {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::string>)
        return v;
      else if constexpr (std::is_same_v<T, timespan>)
        return off_allowed && v == timespan{0} ? "off" : render_duration(v);
      else if constexpr (std::is_same_v<T, std::vector<std::string>>)
        return fmt::format("{}", fmt::join(v, ","));
      else if constexpr (std::is_same_v<T, secret>)
        return v.empty() ? "(not set)" : "<redacted>";
      else
        return fmt::format("{}", v);
    },
    i->second.value);
}

std::map<std::string, std::string> config::join_checked_values() const {
  std::map<std::string, std::string> result;
  for (const auto* key : schema_->keys())
    if (key->checked_on_join)
      result.emplace(key->name, render(key->name));
  return result;
}

error config::set(std::string_view key, std::string_view text,
                  config_origin origin) {
  auto* decl = schema_->find(key);
  if (decl == nullptr)
    return unknown_key_error(*schema_, key, origin);
  auto value = value_of_text(*decl, text);
  if (!value)
    return bad_value_error(*decl, quote(text), origin, value.error().message);
  values_.find(key)->second = entry{std::move(*value), std::move(origin)};
  return {};
}

error config::set(std::string_view key, const raw_config_value& raw,
                  config_origin origin) {
  auto* decl = schema_->find(key);
  if (decl == nullptr)
    return unknown_key_error(*schema_, key, origin);
  auto value = value_of_raw(*decl, raw);
  if (!value)
    return bad_value_error(*decl, show(raw), origin, value.error().message);
  values_.find(key)->second = entry{std::move(*value), std::move(origin)};
  return {};
}

expected<timespan> parse_duration(std::string_view text) {
  auto result = duration_of(text);
  if (!result)
    return make_error(
      errc::bad_config_value,
      fmt::format("bad duration {}: {}", quote(text), result.error().message));
  return result;
}

std::string render_duration(timespan d) {
  if (d == timespan{0})
    return "0s";
  if (d < timespan{0} && d != timespan::min())
    return "-" + render_duration(-d);
  for (const auto& unit : duration_units)
    if (d.count() % unit.ns == 0)
      return fmt::format("{}{}", d.count() / unit.ns, unit.name);
  return fmt::format("{}ns", d.count()); // unreachable: ns divides all
}

std::string env_name_of(std::string_view key) {
  std::string result = "TROUPE_";
  for (char c : key) {
    if (c == '.')
      result += "__";
    else if (c >= 'a' && c <= 'z')
      result += static_cast<char>(c - 'a' + 'A');
    else
      result += c;
  }
  return result;
}

namespace {

std::string type_column(const config_key& key) {
  std::string result{to_string(key.type)};
  if (key.off_allowed)
    result += " or off";
  if (key.min_integer && key.max_integer)
    result += fmt::format(" ({} to {})", *key.min_integer, *key.max_integer);
  else if (key.min_integer)
    result += fmt::format(" (at least {})", *key.min_integer);
  else if (key.max_integer)
    result += fmt::format(" (at most {})", *key.max_integer);
  if (key.min_duration)
    result += fmt::format(" (at least {})", render_duration(*key.min_duration));
  if (!key.allowed.empty())
    result += fmt::format(" (one of: {})", fmt::join(key.allowed, ", "));
  return result;
}

std::string cell(std::string_view text) {
  std::string result;
  for (char c : text) {
    if (c == '|')
      result += "\\|";
    else if (c == '\n')
      result += ' ';
    else
      result += c;
  }
  return result;
}

} // namespace

std::string render_markdown(const config_schema& schema) {
  std::string result = "| key | type | default | env variable | description "
                       "|\n|-----|------|---------|--------------|------------"
                       "-|\n";
  for (const auto* key : schema.keys()) {
    std::string default_cell;
    if (key->type == config_type::secret)
      default_cell = "(secret)";
    else if (key->default_value.empty())
      default_cell = "(empty)";
    else
      default_cell = fmt::format("`{}`", cell(key->default_value));
    auto description = key->description;
    if (key->checked_on_join)
      description += " Checked at join: must be equal on every node.";
    result += fmt::format("| `{}` | {} | {} | `{}` | {} |\n", key->name,
                          cell(type_column(*key)), default_cell,
                          env_name_of(key->name), cell(description));
  }
  return result;
}

config_key make_config_key(std::string name, config_type type,
                           std::string default_value, std::string description) {
  config_key key;
  key.name = std::move(name);
  key.type = type;
  key.default_value = std::move(default_value);
  key.description = std::move(description);
  return key;
}

void add_non_negative_key(config_schema& schema, std::string name,
                          config_type type, std::string default_value,
                          std::string description) {
  auto key = make_config_key(std::move(name), type, std::move(default_value),
                             std::move(description));
  if (type == config_type::integer)
    key.min_integer = 0;
  if (type == config_type::duration)
    key.min_duration = timespan{0};
  schema.add(std::move(key));
}

void add_integer_key(config_schema& schema, std::string name,
                     std::string default_value, std::string description,
                     int64_t min, int64_t max) {
  auto key = make_config_key(std::move(name), config_type::integer,
                             std::move(default_value), std::move(description));
  key.min_integer = min;
  key.max_integer = max;
  schema.add(std::move(key));
}

void add_duration_key(config_schema& schema, std::string name,
                      std::string default_value, std::string description,
                      timespan min) {
  auto key = make_config_key(std::move(name), config_type::duration,
                             std::move(default_value), std::move(description));
  key.min_duration = min;
  schema.add(std::move(key));
}

} // namespace troupe::runtime
