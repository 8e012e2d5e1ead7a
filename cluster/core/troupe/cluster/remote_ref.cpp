#include "troupe/cluster/remote_ref.hpp"

#include "troupe/runtime/errc.hpp"

namespace troupe::cluster {

std::string to_string(const remote_ref& x) {
  auto result = x.name;
  result += '@';
  result += runtime::to_string(x.node);
  return result;
}

runtime::expected<remote_ref> parse_remote_ref(std::string_view text) {
  auto at = text.find('@');
  if (at == std::string_view::npos) {
    std::string msg = "bad remote reference \"";
    msg += text;
    msg += "\": missing '@' (expected name@host:port#uid)";
    return runtime::make_error(runtime::errc::bad_address, std::move(msg));
  }
  auto node = runtime::parse_unique_address(text.substr(at + 1));
  if (!node) {
    auto err = node.error();
    err.message
      = "bad remote reference \"" + std::string{text} + "\": " + err.message;
    return err;
  }
  return remote_ref{std::move(*node), std::string{text.substr(0, at)}};
}

} // namespace troupe::cluster
