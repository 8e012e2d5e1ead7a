#include "log_scan.hpp"

namespace troupe::demo {

std::string last_problem(std::string_view text, std::string_view about) {
  std::string_view found;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text
      = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    // `<time> <level> <component>: <message>`
    auto sp = line.find(' ');
    if (sp == std::string_view::npos)
      continue;
    auto rest = line.substr(sp + 1);
    if ((rest.starts_with("warning ") || rest.starts_with("error "))
        && rest.find(about) != std::string_view::npos)
      found = rest;
  }
  return std::string{found};
}

} // namespace troupe::demo
