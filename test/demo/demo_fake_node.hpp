#pragma once

#include <memory>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "troupe/management/http_server.hpp"

/// @file
/// Helpers of the demo tests that stand in for a node's app API (`POST
/// /deposit?account=ID&deposit=DID&amount=A`) with a management::http_server.

namespace troupe::demo::test_support {

/// The value of `key` in the query of `target` ("" if absent; not
/// percent-decoded: the demo's ids need no escaping).
inline std::string query_value(const std::string& target,
                               const std::string& key) {
  auto q = target.find('?');
  if (q == std::string::npos)
    return {};
  std::istringstream in{target.substr(q + 1)};
  for (std::string kv; std::getline(in, kv, '&');)
    if (kv.starts_with(key + "="))
      return kv.substr(key.size() + 1);
  return {};
}

/// A server on a free port of 127.0.0.1 answering with `h` (on one worker
/// thread, one request at a time).
inline std::unique_ptr<management::http_server>
start_fake_server(management::http_server::handler h) {
  management::http_server_settings s;
  s.port = 0;
  auto srv = management::http_server::start(s, std::move(h));
  REQUIRE(srv);
  return std::move(*srv);
}

} // namespace troupe::demo::test_support
