#include "troupe/singleton/singleton_protocol.hpp"

#include <algorithm>

#include "troupe/singleton/errc.hpp"
#include <fmt/format.h>

namespace troupe::singleton {

namespace {

constexpr size_t max_type_name_size = 200;

bool allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

} // namespace

std::string manager_name(std::string_view type_name) {
  return fmt::format("troupe.singleton.{}.manager", type_name);
}

std::string instance_name(std::string_view type_name) {
  return fmt::format("troupe.singleton.{}", type_name);
}

runtime::error validate_type_name(std::string_view type_name) {
  if (type_name.empty())
    return runtime::make_error(errc::invalid_name,
                               "a singleton type name must not be empty");
  if (type_name.size() > max_type_name_size)
    return runtime::make_error(
      errc::invalid_name,
      fmt::format("singleton type name \"{}...\" is {} bytes long; at most {} "
                  "are allowed",
                  type_name.substr(0, 20), type_name.size(),
                  max_type_name_size));
  if (!std::all_of(type_name.begin(), type_name.end(), allowed))
    return runtime::make_error(
      errc::invalid_name,
      fmt::format("singleton type name \"{}\" may hold only letters, digits, "
                  "'-', '_' and '.'",
                  type_name));
  return {};
}

} // namespace troupe::singleton
