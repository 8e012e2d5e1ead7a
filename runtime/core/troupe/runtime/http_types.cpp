#include "troupe/runtime/http_types.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

namespace {

char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size()
         && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
              return to_lower(x) == to_lower(y);
            });
}

bool is_alpha(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

bool is_hex(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// RFC 9110 tchar: the characters of methods and header names.
bool is_tchar(char c) noexcept {
  return is_alpha(c) || is_digit(c)
         || std::string_view{"!#$%&'*+-.^_`|~"}.find(c)
              != std::string_view::npos;
}

bool is_token(std::string_view x) noexcept {
  return !x.empty() && std::all_of(x.begin(), x.end(), is_tchar);
}

// Controls, space and DEL never appear in a URL we send: they would allow
// request-line injection.
bool is_url_char(char c) noexcept {
  auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

bool is_reg_name_char(char c) noexcept {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'
         || c == '~';
}

bool is_ipv4(std::string_view x) noexcept {
  int parts = 0;
  while (!x.empty()) {
    auto dot = x.find('.');
    auto part = x.substr(0, dot);
    unsigned value = 0;
    auto [end, ec]
      = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || part.size() > 3 || ec != std::errc{}
        || end != part.data() + part.size() || value > 255)
      return false;
    ++parts;
    if (dot == std::string_view::npos)
      break;
    x.remove_prefix(dot + 1);
    if (x.empty())
      return false;
  }
  return parts == 4;
}

// A loose syntactic check: hex digits, ':' and an optional dotted IPv4 tail.
// The resolver rejects what slips through.
bool is_ipv6(std::string_view x) noexcept {
  if (x.size() < 2 || x.find(':') == std::string_view::npos)
    return false;
  return std::all_of(x.begin(), x.end(),
                     [](char c) { return is_hex(c) || c == ':' || c == '.'; });
}

error bad_url(std::string_view shown, std::string_view what) {
  return make_error(errc::http_bad_request,
                    fmt::format("invalid URL \"{}\": {}", shown, what));
}

} // namespace

const std::string* http_response::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name))
      return &h.value;
  return nullptr;
}

timespan http_response::retry_after() const {
  auto* v = header("Retry-After");
  if (v == nullptr)
    return timespan{0};
  std::string_view text{*v};
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  int64_t seconds = 0;
  auto [ptr, ec]
    = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()
      || seconds < 0)
    return timespan{0};
  return std::chrono::seconds{std::min<int64_t>(seconds, 3600)};
}

bool parsed_url::is_ip_literal() const {
  return is_ipv4(host) || is_ipv6(host);
}

std::string parsed_url::authority() const {
  auto default_port = is_tls() ? 443 : 80;
  auto h = is_ipv6(host) ? fmt::format("[{}]", host) : host;
  if (port == default_port)
    return h;
  return fmt::format("{}:{}", h, port);
}

std::string parsed_url::to_string() const {
  return fmt::format("{}://{}{}", scheme, authority(), target);
}

namespace {

// The URL as messages show it: everything up to the last '@' as <redacted>
// (user info, even when an unencoded '/', '?' or '#' in a password ended
// the authority early).
std::string shown_url(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos)
    return std::string{url};
  auto rest = url.substr(scheme_end + 3);
  auto at = rest.rfind('@');
  if (at == std::string_view::npos)
    return std::string{url};
  return fmt::format("{}<redacted>@{}", url.substr(0, scheme_end + 3),
                     rest.substr(at + 1));
}

// Parses `host[:port]` or `[ipv6][:port]` into `out`; returns what is wrong
// (empty on success).
std::string parse_authority(std::string_view authority, parsed_url& out) {
  std::string_view host;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return "unterminated IPv6 literal";
    host = authority.substr(1, close - 1);
    if (!is_ipv6(host))
      return fmt::format("invalid IPv6 literal \"{}\"", host);
    auto after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':')
      return "unexpected characters after IPv6 literal";
    if (!after.empty())
      port_text = after.substr(1);
  } else {
    auto colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos)
      port_text = authority.substr(colon + 1);
    if (!std::all_of(host.begin(), host.end(), is_reg_name_char))
      return fmt::format("invalid host \"{}\"", host);
  }
  if (host.empty())
    return "empty host";
  out.host = std::string{host};
  out.port = out.is_tls() ? 443 : 80;
  if (port_text.empty()) // "host:" means the default port (RFC 3986)
    return {};
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(),
                                   port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size()
      || port == 0 || port > 65535)
    return fmt::format("invalid port \"{}\"", port_text);
  out.port = static_cast<uint16_t>(port);
  return {};
}

} // namespace

expected<parsed_url> parse_url(std::string_view url) {
  if (url.empty())
    return bad_url("", "empty");
  auto shown = shown_url(url);
  if (!std::all_of(url.begin(), url.end(), is_url_char))
    return bad_url(shown, "contains spaces or control characters");
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos)
    return bad_url(shown, "not absolute (expected http:// or https://)");
  parsed_url result;
  auto scheme = url.substr(0, scheme_end);
  if (iequals(scheme, "http"))
    result.scheme = "http";
  else if (iequals(scheme, "https"))
    result.scheme = "https";
  else
    return bad_url(shown, fmt::format("unsupported scheme \"{}\" (expected "
                                      "http or https)",
                                      scheme));
  auto rest = url.substr(scheme_end + 3);
  // Credentials in a URL are refused wherever the '@' is: a password with
  // an unencoded '/' would otherwise end the authority early and parse as
  // host and port ("root:1234/x@host" -> host root, port 1234), or show up
  // in the reason ("invalid port ...").
  if (rest.find('@') != std::string_view::npos)
    return bad_url(shown, "user info is not supported (pass credentials in "
                          "headers; percent-encode a literal '@' as %40)");
  auto auth_end = rest.find_first_of("/?#");
  if (auto what = parse_authority(rest.substr(0, auth_end), result);
      !what.empty())
    return bad_url(shown, what);
  auto tail = auth_end == std::string_view::npos ? std::string_view{}
                                                 : rest.substr(auth_end);
  tail = tail.substr(0, tail.find('#')); // fragments are never sent
  if (tail.empty())
    result.target = "/";
  else if (tail.front() == '?')
    result.target = fmt::format("/{}", tail);
  else
    result.target = std::string{tail};
  return result;
}

error validate_request(const http_request& req) {
  auto url = parse_url(req.url);
  if (!url)
    return make_error(errc::http_bad_request,
                      fmt::format("{} {}", req.method, url.error().message));
  auto where = fmt::format("{} {}", req.method, url->to_string());
  if (!is_token(req.method))
    return make_error(errc::http_bad_request,
                      fmt::format("{}: invalid method", where));
  if (req.timeout <= timespan::zero())
    return make_error(errc::http_bad_request,
                      fmt::format("{}: timeout must be positive (got {} ns)",
                                  where, req.timeout.count()));
  if (req.max_response_bytes == 0)
    return make_error(
      errc::http_bad_request,
      fmt::format("{}: max_response_bytes must be positive", where));
  for (const auto& h : req.headers) {
    if (!is_token(h.name))
      return make_error(
        errc::http_bad_request,
        fmt::format("{}: invalid header name \"{}\"", where, h.name));
    if (h.value.find_first_of(std::string_view{"\r\n\0", 3})
        != std::string::npos)
      return make_error(errc::http_bad_request,
                        fmt::format("{}: header \"{}\" has a value with CR, "
                                    "LF or NUL",
                                    where, h.name));
  }
  return {};
}

} // namespace troupe::runtime
