#include "troupe/runtime/unique_address.hpp"

#include <charconv>

#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

std::string to_string(const unique_address& x) {
  std::string result;
  bool ipv6 = x.host.find(':') != std::string::npos;
  if (ipv6)
    result += '[';
  result += x.host;
  if (ipv6)
    result += ']';
  result += ':';
  result += std::to_string(x.port);
  result += '#';
  result += std::to_string(x.uid);
  return result;
}

namespace {

error bad(std::string_view text, std::string_view why) {
  std::string msg = "bad unique address \"";
  msg += text;
  msg += "\": ";
  msg += why;
  msg += " (expected host:port#uid)";
  return make_error(errc::bad_address, std::move(msg));
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  if (text.empty())
    return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

} // namespace

expected<unique_address> parse_unique_address(std::string_view text) {
  auto hash = text.rfind('#');
  if (hash == std::string_view::npos)
    return bad(text, "missing '#uid'");
  unique_address result;
  if (!parse_number(text.substr(hash + 1), result.uid))
    return bad(text, "uid is not an unsigned 64-bit number");
  auto host_port = text.substr(0, hash);
  auto colon = host_port.rfind(':');
  if (colon == std::string_view::npos)
    return bad(text, "missing ':port'");
  if (!parse_number(host_port.substr(colon + 1), result.port))
    return bad(text, "port is not a number in 0..65535");
  auto host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty())
    return bad(text, "empty host");
  result.host = std::string{host};
  return result;
}

} // namespace troupe::runtime
