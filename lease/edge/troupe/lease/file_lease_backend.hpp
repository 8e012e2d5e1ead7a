#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "troupe/lease/file_lease_format.hpp"
#include "troupe/lease/lease_backend.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The file lease backend: one host, many processes (DESIGN.md §5, §10).
/// One record file per lease name in a directory, guarded by fcntl open
/// file description (OFD) locks; expiry on the host's CLOCK_MONOTONIC.

namespace troupe::lease {

/// Options of a file_lease_backend.
struct file_lease_backend_options {
  /// Directory of the record files (created, with parents, if missing).
  std::string directory;
  /// How long one call waits for another process's lock before it reports
  /// `unavailable` (a process stopped with SIGSTOP inside a call keeps its
  /// lock; a killed one loses it). Keep it below the lease's
  /// operation_timeout, which bounds each call anyway.
  timespan lock_timeout = std::chrono::milliseconds{500};
  /// Pause between two attempts to take the lock.
  timespan lock_retry_delay = std::chrono::milliseconds{2};
  /// The current boot's id; empty means "read /proc/sys/kernel/random/
  /// boot_id". Tests set it to simulate a reboot.
  std::string boot_id;
};

/// A lease_backend over record files in one directory, shared by every
/// process of one host (the embedded default of the local multi-process
/// demo; DESIGN.md §5).
///
/// Each operation, on the backend's worker thread: open (or create)
/// `<directory>/<lease_file_name(name)>`; take an exclusive OFD lock
/// (`F_OFD_SETLK`, retried every `lock_retry_delay` up to `lock_timeout`);
/// read and decode the record; treat a record of another boot as expired;
/// apply the shared record rules (lease_record.hpp `apply`) with `now` =
/// CLOCK_MONOTONIC read under the lock; if the record changed, write it
/// back; unlock and close.
///
/// Durability: the new record is written with one `pwrite` at offset 0,
/// then the file is truncated to its length and `fdatasync`ed before the
/// reply; a newly created file also has its directory `fsync`ed. A process
/// that dies at any point leaves either the old or the new record (the
/// `end` line makes a missing truncate harmless); after a power loss the
/// last acknowledged record is on disk, so `last_token` never goes back and
/// fencing tokens keep increasing across reboots. The cost is one
/// fdatasync per acquisition, renewal and release (not per contended
/// attempt: a call that changes nothing writes nothing).
///
/// Replies: `ok`/`held`/`not_found` as the record rules say, with `detail`
/// naming the file; `unavailable` when the lock wait exceeded
/// `lock_timeout` or an I/O call failed transiently (detail names the path
/// and the errno text); `rejected` for a record file that cannot be parsed
/// (never silently reset: detail names the file and the line), a name whose
/// file name would be too long, or a permission problem.
///
/// Does not: protect against processes that write the files without the
/// lock, work across hosts (the clock is per host; network file systems'
/// lock semantics vary), or delete record files (`last_token` must
/// survive).
///
/// Thread-safety: all members may be called from any thread. Calls never
/// block the caller: they are queued to one worker thread per backend
/// object, which calls `done`. The destructor finishes the queued calls
/// (each bounded by `lock_timeout`), then joins the worker: it blocks that
/// long (the lease actor's final fire-and-forget release is such a call).
class file_lease_backend final : public lease_backend {
public:
  /// Creates the directory if missing and reads the boot id. Errors (lease
  /// errc::backend_rejected / backend_unavailable) name the path that
  /// failed, e.g. `file store /run/x: cannot create directory: Permission
  /// denied`.
  static runtime::expected<std::shared_ptr<file_lease_backend>>
  make(file_lease_backend_options opts);

  ~file_lease_backend() override;

  file_lease_backend(const file_lease_backend&) = delete;
  file_lease_backend& operator=(const file_lease_backend&) = delete;

  /// Queues an acquire (lease_record.hpp rules); `done` runs on the worker.
  void acquire(const backend_request& req, callback done) override;

  /// Queues a renewal; `done` runs on the worker.
  void renew(const backend_request& req, callback done) override;

  /// Queues a release; `done` runs on the worker.
  void release(const backend_request& req, callback done) override;

  /// `file store <directory>`.
  std::string describe() const override;

  /// Rejects a lease name whose record file name exceeds the file system's
  /// limit of 255 bytes (lease errc::invalid_settings naming the field).
  runtime::error validate(const lease_settings& s) const override;

  /// The path of the record file of lease `name`.
  std::string path_of(std::string_view name) const;

  /// The options in use (with the boot id filled in).
  const file_lease_backend_options& options() const noexcept {
    return opts_;
  }

private:
  explicit file_lease_backend(file_lease_backend_options opts);

  void enqueue(backend_op op, const backend_request& req, callback done);
  void run_worker();
  backend_reply execute(backend_op op, const backend_request& req);

  file_lease_backend_options opts_;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread worker_;
};

} // namespace troupe::lease
