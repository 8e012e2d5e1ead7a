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
/// Each operation, on the backend's worker thread: open (or create, see
/// below) `<directory>/<lease_file_name(name)>`; take an exclusive OFD lock
/// (`F_OFD_SETLK`, retried every `lock_retry_delay` up to `lock_timeout`);
/// read and decode the record; treat a record of another boot as expired;
/// apply the shared record rules (lease_record.hpp `apply`) with `now` =
/// CLOCK_MONOTONIC read under the lock; if the record changed (or this call
/// created the file), write it back; unlock and close.
///
/// Creation: a missing record file is created already locked: a temporary
/// file `.troupe-new-<pid>-...` in the directory is created (`O_EXCL`),
/// locked, hard-linked (`link`) to the record file's name and unlinked. So
/// no process can open a record file before its creator holds the lock:
/// whoever loses the race waits for the lock and reads the creator's first
/// record. The directory's file system must support hard links (a
/// `rejected` reply naming the path says so otherwise).
///
/// Empty files: an empty record file is a fresh record (no holder,
/// `last_token` 0) only for the call that just created it. An empty file
/// that existed before the call was truncated, or its creator died between
/// the `link` and its first write (or the host lost power then): its token
/// counter is lost, and starting again at 1 could hand a live holder's
/// token to a second holder. Every call on it is `rejected` with the detail
/// `file store <path>: record file is empty but existed: refusing to
/// restart the token counter; delete it only when no process holds the
/// lease`. Operator's fix: stop (or wait out the ttl of) every process that
/// may hold the lease, then delete the file; tokens start again at 1, so a
/// fenced resource that saw higher tokens rejects them until the counter
/// passes. To keep tokens increasing instead, write a released record by
/// hand with `last_token` at or above the highest token ever issued
/// (format in file_lease_format.hpp, any boot id). If the first write of a
/// file this call created fails (disk full, I/O error), the call removes
/// the file again, so a transient error leaves no empty file behind.
///
/// Token counter file: `<directory>/.tokens/<record file name>` holds the
/// highest token issued for the name (a decimal number and a newline; no
/// record file name starts with '.', so `.tokens` is never one). Each call
/// reads it under the record file's lock and counts `last_token` as the
/// larger of the record's and the counter's; when an acquisition raises
/// `last_token` above the counter, the counter is written (and synced)
/// before the record. So a record file deleted by hand while held is lost
/// for its holder at its next renewal (`not_found`, detail `file store
/// <path>: the record file was missing (deleted by hand?): the record
/// disappeared`; the renewal writes a record without holder), and the next
/// acquisition's token is still greater than every earlier one. A counter
/// that is not a decimal number is `rejected` naming its path (never
/// reset). Deleting the whole directory restarts the tokens at 1.
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
/// naming the file (and for `not_found` why: the file was missing, the
/// record has no holder, or it expired); `unavailable` when the lock wait
/// exceeded `lock_timeout` or an I/O call failed transiently (detail names the
/// path and the errno text); `rejected` (detail naming the path) for a record
/// file that cannot be parsed (never silently reset: detail names the
/// line), an existing empty record file (above), a record path that is a
/// symbolic link to a missing target, a directory, a FIFO, a socket or a
/// device, a name whose file name would be too long, or a permission
/// problem.
///
/// Does not: protect against processes that write the files without the
/// lock, work across hosts (the clock is per host; network file systems'
/// lock semantics vary), or delete record files or counters (the one
/// exception is a record file the same call created and failed to write). A
/// process killed between creating and unlinking a temporary file leaves it
/// behind (empty, never read; safe to delete).
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
