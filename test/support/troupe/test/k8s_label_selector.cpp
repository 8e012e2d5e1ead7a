#include "troupe/test/k8s_label_selector.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::test {

namespace {

using op = k8s_label_requirement::op;

enum class tok {
  ident,
  in,
  not_in,
  bang,
  eq,
  deq,
  neq,
  gt,
  lt,
  lparen,
  rparen,
  comma,
  end,
};

struct token {
  tok what = tok::end;
  std::string text;
};

bool is_special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>'
         || c == '<' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The lexer of selector.go: identifiers are runs of non-special bytes;
// "in" and "notin" are keywords.
std::vector<token> lex(std::string_view s) {
  std::vector<token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '=' || c == '!') {
      bool two = i + 1 < s.size() && s[i + 1] == '=';
      auto what
        = c == '=' ? (two ? tok::deq : tok::eq) : (two ? tok::neq : tok::bang);
      out.push_back({what, std::string{s.substr(i, two ? 2 : 1)}});
      i += two ? 2 : 1;
    } else if (is_special(c)) {
      auto what = c == '('   ? tok::lparen
                  : c == ')' ? tok::rparen
                  : c == ',' ? tok::comma
                  : c == '>' ? tok::gt
                             : tok::lt;
      out.push_back({what, std::string(1, c)});
      ++i;
    } else {
      auto start = i;
      while (i < s.size() && !is_special(s[i]))
        ++i;
      std::string text{s.substr(start, i - start)};
      auto what = text == "in"      ? tok::in
                  : text == "notin" ? tok::not_in
                                    : tok::ident;
      out.push_back({what, std::move(text)});
    }
  }
  out.push_back({tok::end, "end of string"});
  return out;
}

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9');
}

// A label value or the name part of a key: 1..63 (values: 0..63)
// characters, alphanumerics, '-', '_', '.', alphanumeric at both ends.
bool is_name_part(std::string_view s, bool empty_ok) {
  if (s.empty())
    return empty_ok;
  if (s.size() > 63 || !alnum(s.front()) || !alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253)
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
          || c == '.'))
      return false;
  return alnum(s.front()) && alnum(s.back());
}

bool is_label_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return is_name_part(key, false);
  return is_dns_subdomain(key.substr(0, slash))
         && is_name_part(key.substr(slash + 1), false);
}

runtime::error fail(std::string msg) {
  return runtime::make_error(runtime::errc::bad_config_value, std::move(msg));
}

runtime::error found(const token& t, std::string_view expected) {
  return fail(fmt::format("found '{}', expected: {}", t.text, expected));
}

class parser {
public:
  explicit parser(std::string_view text) : toks_(lex(text)) {}

  runtime::expected<k8s_label_selector> parse() {
    k8s_label_selector sel;
    if (peek().what == tok::end)
      return sel;
    for (;;) {
      k8s_label_requirement req;
      if (auto err = requirement(req))
        return err;
      sel.requirements.push_back(std::move(req));
      auto& t = next();
      if (t.what == tok::end)
        return sel;
      if (t.what != tok::comma)
        return found(t, "',' or 'end of string'");
    }
  }

private:
  const token& peek() const {
    return toks_[std::min(at_, toks_.size() - 1)];
  }

  const token& next() {
    auto& t = peek();
    if (at_ < toks_.size() - 1)
      ++at_;
    return t;
  }

  runtime::error requirement(k8s_label_requirement& req) {
    bool bang = peek().what == tok::bang;
    if (bang)
      next();
    auto& key = next();
    if (key.what != tok::ident)
      return found(key, "identifier");
    if (!is_label_key(key.text))
      return fail(fmt::format("invalid label key \"{}\": name part must "
                              "consist of alphanumeric characters, '-', '_' "
                              "or '.', and must start and end with an "
                              "alphanumeric character (with an optional DNS "
                              "subdomain prefix and '/')",
                              key.text));
    req.key = key.text;
    if (peek().what == tok::end || peek().what == tok::comma) {
      req.what = bang ? op::not_exists : op::exists;
      return {};
    }
    auto& o = next();
    switch (o.what) {
      case tok::eq:
      case tok::deq:
        req.what = op::equals;
        return exact_value(req);
      case tok::neq:
        req.what = op::not_equals;
        return exact_value(req);
      case tok::gt:
      case tok::lt:
        req.what = o.what == tok::gt ? op::gt : op::lt;
        return integer_value(req);
      case tok::in:
      case tok::not_in:
        req.what = o.what == tok::in ? op::in : op::not_in;
        return value_set(req);
      default:
        return found(o, "[!= == = > < in notin]");
    }
  }

  runtime::error value(k8s_label_requirement& req, std::string text) {
    if (!is_name_part(text, true))
      return fail(fmt::format("invalid label value \"{}\": must be 63 "
                              "characters or less and consist of "
                              "alphanumerics, '-', '_' or '.', starting and "
                              "ending with an alphanumeric",
                              text));
    req.values.push_back(std::move(text));
    return {};
  }

  runtime::error exact_value(k8s_label_requirement& req) {
    if (peek().what == tok::end || peek().what == tok::comma)
      return value(req, {});
    auto& t = next();
    if (t.what != tok::ident)
      return found(t, "identifier");
    return value(req, t.text);
  }

  runtime::error integer_value(k8s_label_requirement& req) {
    auto& t = next();
    int64_t n = 0;
    auto [p, ec]
      = std::from_chars(t.text.data(), t.text.data() + t.text.size(), n);
    if (t.what != tok::ident || ec != std::errc{}
        || p != t.text.data() + t.text.size())
      return fail(fmt::format("for 'Gt', 'Lt' operators, the value must be "
                              "an integer, found '{}'",
                              t.text));
    req.values.push_back(t.text);
    return {};
  }

  runtime::error value_set(k8s_label_requirement& req) {
    if (auto& t = next(); t.what != tok::lparen)
      return found(t, "'('");
    if (peek().what == tok::rparen) {
      next();
      return fail("for 'in', 'notin' operators, values set can't be empty");
    }
    for (;;) {
      std::string v;
      if (peek().what == tok::ident)
        v = next().text;
      else if (peek().what != tok::comma && peek().what != tok::rparen)
        return found(peek(), "',', ')' or identifier");
      if (auto err = value(req, std::move(v)))
        return err;
      auto& t = next();
      if (t.what == tok::rparen)
        return {};
      if (t.what != tok::comma)
        return found(t, "',' or ')'");
    }
  }

  std::vector<token> toks_;
  size_t at_ = 0;
};

std::optional<int64_t> integer(const std::string& s) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || p != s.data() + s.size())
    return std::nullopt;
  return n;
}

bool holds(const k8s_label_requirement& r,
           const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  auto listed = [&] {
    return has
           && std::find(r.values.begin(), r.values.end(), it->second)
                != r.values.end();
  };
  switch (r.what) {
    case op::exists:
      return has;
    case op::not_exists:
      return !has;
    case op::equals:
    case op::in:
      return listed();
    case op::not_equals:
    case op::not_in:
      return !listed();
    case op::gt:
    case op::lt: {
      auto have = has ? integer(it->second) : std::nullopt;
      auto want = integer(r.values.front());
      if (!have || !want)
        return false;
      return r.what == op::gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

} // namespace

bool k8s_label_selector::matches(
  const std::map<std::string, std::string>& labels) const {
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const auto& r) { return holds(r, labels); });
}

runtime::expected<k8s_label_selector>
parse_k8s_label_selector(std::string_view text) {
  return parser{text}.parse();
}

} // namespace troupe::test
