#pragma once

#include <cstdint>
#include <string>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"

/// @file
/// The demo node's own configuration keys (`demo.*`), declared through a
/// runtime::module so that `--demo.api_port=8081`, `TROUPE_DEMO__API_PORT`
/// and `--config=FILE` work as for every other troupe key.

namespace troupe::demo {

/// The `demo.*` settings of one troupe-demo-node.
struct node_settings {
  /// The store's base URL (`demo.store_url`, default http://127.0.0.1:7070):
  /// `http://host:port`, no path.
  std::string store_url = "http://127.0.0.1:7070";
  /// The app API's bind address (`demo.api_bind`, default 127.0.0.1).
  std::string api_bind = "127.0.0.1";
  /// The app API's port (`demo.api_port`, default 8080; 0: a free one).
  uint16_t api_port = 8080;
  /// How often the scheduler singleton writes a ledger record
  /// (`demo.tick_interval`, default 500ms, at least 10ms).
  runtime::timespan tick_interval = std::chrono::milliseconds{500};
  /// How long one request to the store may take (`demo.store_timeout`,
  /// default 2s, at least 10ms).
  runtime::timespan store_timeout = std::chrono::seconds{2};
  /// How long the app API waits for an entity to persist a deposit before
  /// it answers 504 (`demo.deposit_timeout`, default 3s, at least 10ms).
  runtime::timespan deposit_timeout = std::chrono::seconds{3};
  /// This node's name in its history (`demo.node_name`, default empty:
  /// the node's cluster address).
  std::string node_name;
  /// Where the node appends its history (`demo.history_file`, default
  /// empty: nowhere; history_log.hpp).
  std::string history_file;
};

/// The module that declares the `demo.*` keys (no CAF registrations: the
/// demo's messages are built from CAF's and the cluster's types).
runtime::module demo_module();

/// The settings from a configuration whose schema `demo_module` filled.
/// Errors (runtime::errc::bad_config_value) name the key: a store URL that
/// is not `http://host[:port]` without a path.
runtime::expected<node_settings>
node_settings_from_config(const runtime::config& cfg);

} // namespace troupe::demo
