#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "store_json.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// A demo node's history (`demo.history_file`): one JSON object per line
/// for every event the chaos checker (test/chaos, docs/design/chaos.md)
/// reads beside the store's files: the singleton instance and the account
/// entities starting and stopping, the lease lost, and every guarded side
/// effect stamped just before it is made (DESIGN.md §10: "every side
/// effect is stamped (token, node, monotonic time on the shared host
/// clock)").
///
/// A line: `{"mono_ns":N,"node":"node-3","address":"h:p#uid","event":"E",
/// ...fields}`, `mono_ns` CLOCK_MONOTONIC in nanoseconds (the store and the
/// client stamp with the same clock), `node` the `demo.node_name`,
/// `address` this process's unique address. The events and their fields
/// are listed in docs/design/chaos.md.

namespace troupe::demo {

/// The history file of one node process.
///
/// Each `record` is one write(2) of one whole line to a file opened with
/// O_APPEND, so a process killed with SIGKILL loses no line it recorded
/// and leaves no half line unless the kernel cut the write (the checker
/// ignores a cut last line). Thread-safe: any actor may record.
class history_log {
public:
  /// Opens (creates, appends to) `path`. An empty path gives a log that
  /// records nothing. Errors (runtime::errc::bad_config_value, the file
  /// comes from `demo.history_file`): the path and the OS's reason.
  static runtime::expected<std::shared_ptr<const history_log>>
  open(const std::string& path, std::string node, std::string address);

  ~history_log();

  history_log(const history_log&) = delete;
  history_log& operator=(const history_log&) = delete;

  /// Appends the event, stamped now (CLOCK_MONOTONIC). A failed write is
  /// reported once on stderr and then ignored (the node keeps running; the
  /// checker reports the history as incomplete).
  void record(std::string_view event,
              std::initializer_list<history_field> fields = {}) const;

  /// True when a file is written.
  bool enabled() const noexcept {
    return fd_ >= 0;
  }

private:
  history_log(int fd, std::string node, std::string address);

  int fd_ = -1;
  std::string node_;
  std::string address_;
  mutable bool write_failed_ = false;
};

using history_ptr = std::shared_ptr<const history_log>;

} // namespace troupe::demo
