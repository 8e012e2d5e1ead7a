#include "troupe/lease/file_lease_backend.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/runtime/file_kind.hpp"

namespace troupe::lease {

namespace {

std::string errno_text(int code) {
  return std::error_code{code, std::generic_category()}.message();
}

// Permission and path problems do not heal by retrying.
backend_status status_of_errno(int code) {
  switch (code) {
    case EACCES:
    case EPERM:
    case EROFS:
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case ENXIO: // a socket or a device without a driver
      return backend_status::rejected;
    default:
      return backend_status::unavailable;
  }
}

errc errc_of(backend_status status) {
  return status == backend_status::rejected ? errc::backend_rejected
                                            : errc::backend_unavailable;
}

backend_reply failure(backend_status status, std::string detail) {
  backend_reply result;
  result.status = status;
  result.detail = std::move(detail);
  return result;
}

backend_reply io_failure(const std::string& path, std::string_view what,
                         int code) {
  return failure(
    status_of_errno(code),
    fmt::format("file store {}: {}: {}", path, what, errno_text(code)));
}

// Closes a file descriptor (and so drops its OFD lock) on scope exit.
class unique_fd {
public:
  explicit unique_fd(int fd) : fd_(fd) {}
  ~unique_fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  int get() const noexcept {
    return fd_;
  }

private:
  int fd_;
};

std::error_code create_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ec;
}

// Takes the exclusive OFD lock on the whole file, polling until `bound`.
// Returns 0, or an errno (EWOULDBLOCK when the bound passed).
int lock_record(int fd, timespan bound, timespan retry_delay) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0; // the whole file
    fl.l_pid = 0; // required for OFD locks
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0)
      return 0;
    if (errno != EAGAIN && errno != EACCES && errno != EINTR)
      return errno;
    if (std::chrono::steady_clock::now() >= deadline)
      return EWOULDBLOCK;
    std::this_thread::sleep_for(retry_delay);
  }
}

// Creates the record file at `path` with this descriptor already holding
// the OFD lock: a temporary file in the same directory is created, locked,
// then hard-linked to `path` and unlinked. So nobody can open the record file
// before its creator holds the lock; whoever opens it later waits for the
// lock and reads the creator's record (or, if the creator died before it
// wrote, an empty file that it did not create). Returns the descriptor, or -1
// with errno (EEXIST: somebody else created `path` first).
int create_locked(const std::string& dir, const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  // Record file names never start with '.' (lease_file_name escapes it), so
  // the temporary name can never be a record file's.
  auto tmp = (std::filesystem::path{dir}
              / fmt::format(".troupe-new-{}-{}-{:08x}", ::getpid(), ++counter,
                            std::random_device{}()))
               .string();
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  // Nobody else knows the name yet: the lock is granted at once.
  int err = lock_record(fd, timespan{0}, timespan{0});
  if (err == 0 && ::link(tmp.c_str(), path.c_str()) != 0)
    err = errno;
  ::unlink(tmp.c_str());
  if (err != 0) {
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// What a dangling symbolic link at `path` points to; nullopt if `path` is
// not a symbolic link.
std::optional<std::string> symlink_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
    return std::nullopt;
  std::error_code ec;
  auto target = std::filesystem::read_symlink(path, ec);
  return ec ? std::string{"?"} : target.string();
}

// Opens the record file into `fd`, creating it (see create_locked) if
// missing; `created` tells whether this call created it. Returns the reply
// to give when it cannot.
std::optional<backend_reply> open_record(const std::string& dir,
                                         const std::string& path, int& fd,
                                         bool& created) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      created = false;
      return std::nullopt;
    }
    if (errno != ENOENT)
      return io_failure(path, "cannot open", errno);
    if (auto target = symlink_target(path))
      return failure(backend_status::rejected,
                     fmt::format("file store {}: a symbolic link to {}, which "
                                 "does not exist; remove the link or make it "
                                 "point to the record file",
                                 path, *target));
    fd = create_locked(dir, path);
    if (fd >= 0) {
      created = true;
      return std::nullopt;
    }
    if (errno == EEXIST)
      continue; // another process created it meanwhile: open that one
    if (errno != ENOENT)
      return io_failure(path,
                        "cannot create (a temporary file hard-linked "
                        "into place)",
                        errno);
    // The directory vanished since make(): create it again.
    if (auto ec = create_directories(dir))
      return io_failure(dir, "cannot create the directory", ec.value());
  }
  return failure(backend_status::unavailable,
                 fmt::format("file store {}: the record file vanished three "
                             "times while being opened",
                             path));
}

// Checks that `fd` is a regular file and takes its lock (see lock_record);
// returns the reply to give when either fails.
std::optional<backend_reply>
lock_regular_file(int fd, const std::string& path,
                  const file_lease_backend_options& opts) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return io_failure(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode))
    return failure(backend_status::rejected,
                   fmt::format("file store {}: {}, not a record file", path,
                               runtime::file_kind(st.st_mode)));
  auto err = lock_record(fd, opts.lock_timeout, opts.lock_retry_delay);
  if (err == 0)
    return std::nullopt;
  if (err != EWOULDBLOCK)
    return io_failure(path, "cannot lock", err);
  return failure(
    backend_status::unavailable,
    fmt::format(
      "file store {}: locked by another process for "
      "more than {}ms",
      path,
      std::chrono::duration_cast<std::chrono::milliseconds>(opts.lock_timeout)
        .count()));
}

// Removes the record file this call created (and so never wrote a record
// to) after its first write failed: left empty, it would block the lease
// until an operator deleted it. Only if `path` still names `fd`'s file.
void remove_unwritten(int fd, const std::string& path) {
  struct stat mine {};
  struct stat named {};
  if (::fstat(fd, &mine) == 0 && ::stat(path.c_str(), &named) == 0
      && mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
    ::unlink(path.c_str());
}

// Reads the whole (small) file; returns 0 or an errno (EFBIG if too large).
int read_all(int fd, std::string& out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return errno;
  if (st.st_size > static_cast<off_t>(max_lease_file_size))
    return EFBIG;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    auto n = ::pread(fd, out.data() + done, out.size() - done,
                     static_cast<off_t>(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      break; // shrank meanwhile (cannot happen under the lock)
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return 0;
}

// Writes `text` at offset 0 with one pwrite (a record is far below a page,
// so the kernel applies it whole), truncates the file to it and syncs.
// Returns an empty string or what failed.
std::string write_record(int fd, const std::string& text) {
  ssize_t n;
  do {
    n = ::pwrite(fd, text.data(), text.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return fmt::format("write failed: {}", errno_text(errno));
  if (static_cast<size_t>(n) != text.size())
    return fmt::format("short write ({} of {} bytes)", n, text.size());
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0)
    return fmt::format("truncate failed: {}", errno_text(errno));
  if (::fdatasync(fd) != 0)
    return fmt::format("fdatasync failed: {}", errno_text(errno));
  return {};
}

// Makes a new file's directory entry durable (fdatasync covers the data).
int sync_directory(const std::string& dir) {
  unique_fd dfd{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dfd.get() < 0)
    return errno;
  return ::fsync(dfd.get()) == 0 ? 0 : errno;
}

// The directory of the token counters, inside the store's directory. Record
// file names never start with '.', so it can never be a record file.
constexpr const char* counter_dir_name = ".tokens";

// Reads the token counter file at `path` into `value` (0 when the file
// does not exist); returns the reply to give when it cannot. The caller
// holds the record file's lock.
std::optional<backend_reply> read_counter(const std::string& path,
                                          uint64_t& value) {
  value = 0;
  unique_fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.get() < 0)
    return errno == ENOENT ? std::nullopt
                           : std::optional{io_failure(
                             path, "cannot open the token counter", errno)};
  std::string text;
  if (auto err = read_all(fd.get(), text))
    return io_failure(path, "cannot read the token counter", err);
  auto digits = std::string_view{text}.substr(
    0, text.empty() || text.back() != '\n' ? text.size() : text.size() - 1);
  bool valid = !digits.empty() && digits.size() < 20;
  for (char c : digits)
    valid = valid && c >= '0' && c <= '9';
  if (!valid)
    return failure(backend_status::rejected,
                   fmt::format("file store {}: corrupt token counter \"{}\" "
                               "(expected the last issued token, a decimal "
                               "number)",
                               path, escape_for_message(text, 40)));
  for (char c : digits)
    value = value * 10 + static_cast<uint64_t>(c - '0');
  return std::nullopt;
}

// Writes `value` to the token counter file at `path` (created, with its
// directory `dir`, if missing) durably; returns the reply to give when it
// cannot.
std::optional<backend_reply>
write_counter(const std::string& dir, const std::string& path, uint64_t value) {
  bool dir_existed = std::filesystem::is_directory(dir);
  if (!dir_existed)
    if (auto ec = create_directories(dir))
      return io_failure(dir, "cannot create the token counter directory",
                        ec.value());
  bool existed = ::access(path.c_str(), F_OK) == 0;
  unique_fd fd{::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (fd.get() < 0)
    return io_failure(path, "cannot create the token counter", errno);
  if (auto err = write_record(fd.get(), fmt::format("{}\n", value));
      !err.empty())
    return failure(backend_status::unavailable,
                   fmt::format("file store {}: token counter: {}", path, err));
  if (!existed)
    if (auto err = sync_directory(dir))
      return io_failure(dir, "cannot sync the directory", err);
  if (!dir_existed)
    if (auto err
        = sync_directory(std::filesystem::path{dir}.parent_path().string()))
      return io_failure(dir, "cannot sync the parent directory", err);
  return std::nullopt;
}

runtime::expected<std::string> read_boot_id() {
  static constexpr const char* path = "/proc/sys/kernel/random/boot_id";
  std::ifstream in{path};
  std::string id;
  if (!in || !std::getline(in, id) || id.empty())
    return runtime::make_error(errc::backend_unavailable,
                               fmt::format("file store: cannot read the boot "
                                           "id from {}",
                                           path));
  return id;
}

} // namespace

runtime::expected<std::shared_ptr<file_lease_backend>>
file_lease_backend::make(file_lease_backend_options opts) {
  if (opts.directory.empty())
    return runtime::make_error(errc::backend_rejected,
                               "file store: the directory is empty");
  if (auto ec = create_directories(opts.directory))
    return runtime::make_error(errc_of(status_of_errno(ec.value())),
                               fmt::format("file store {}: cannot create the "
                                           "directory: {}",
                                           opts.directory, ec.message()));
  std::error_code ec;
  if (!std::filesystem::is_directory(opts.directory, ec))
    return runtime::make_error(
      errc::backend_rejected,
      fmt::format("file store {}: not a directory", opts.directory));
  if (opts.boot_id.empty()) {
    auto id = read_boot_id();
    if (!id)
      return id.error();
    opts.boot_id = std::move(*id);
  }
  return std::shared_ptr<file_lease_backend>{
    new file_lease_backend(std::move(opts))};
}

file_lease_backend::file_lease_backend(file_lease_backend_options opts)
  : opts_(std::move(opts)) {
  worker_ = std::thread{[this] { run_worker(); }};
}

file_lease_backend::~file_lease_backend() {
  {
    std::lock_guard guard{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void file_lease_backend::acquire(const backend_request& req, callback done) {
  enqueue(backend_op::acquire, req, std::move(done));
}

void file_lease_backend::renew(const backend_request& req, callback done) {
  enqueue(backend_op::renew, req, std::move(done));
}

void file_lease_backend::release(const backend_request& req, callback done) {
  enqueue(backend_op::release, req, std::move(done));
}

std::string file_lease_backend::describe() const {
  return "file store " + opts_.directory;
}

runtime::error file_lease_backend::validate(const lease_settings& s) const {
  auto file = lease_file_name(s.name);
  if (file.size() <= max_lease_file_name)
    return {};
  return runtime::make_error(errc::invalid_settings,
                             fmt::format("lease \"{}\": name is {} bytes as a "
                                         "file name in the file store (at "
                                         "most {}, after %-escaping)",
                                         s.name, file.size(),
                                         max_lease_file_name));
}

std::string file_lease_backend::path_of(std::string_view name) const {
  return (std::filesystem::path{opts_.directory} / lease_file_name(name))
    .string();
}

void file_lease_backend::enqueue(backend_op op, const backend_request& req,
                                 callback done) {
  auto job = [this, op, req, done = std::move(done)]() mutable {
    backend_reply reply;
    try {
      reply = execute(op, req);
    } catch (const std::exception& ex) {
      reply
        = failure(backend_status::unavailable,
                  fmt::format("file store {}: {}", opts_.directory, ex.what()));
    }
    try {
      done(std::move(reply));
    } catch (...) {
      // The contract says callbacks do not throw; never kill the worker.
    }
  };
  {
    // Also while stopping: a callback run by the draining worker may queue
    // a follow-up call, which the worker then runs before it exits.
    std::lock_guard guard{mtx_};
    jobs_.emplace_back(std::move(job));
  }
  cv_.notify_one();
}

void file_lease_backend::run_worker() {
  std::unique_lock guard{mtx_};
  for (;;) {
    cv_.wait(guard, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty())
      return; // stopping, and every queued call is done
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    guard.unlock();
    job();
    guard.lock();
  }
}

backend_reply file_lease_backend::execute(backend_op op,
                                          const backend_request& req) {
  auto path = path_of(req.name);
  if (lease_file_name(req.name).size() > max_lease_file_name)
    return failure(backend_status::rejected,
                   fmt::format("file store {}: the name of lease \"{}\" is too "
                               "long for a file name",
                               opts_.directory, req.name));
  bool created = false;
  int raw_fd = -1;
  if (auto failed = open_record(opts_.directory, path, raw_fd, created))
    return std::move(*failed);
  unique_fd fd{raw_fd};
  if (auto failed = lock_regular_file(fd.get(), path, opts_))
    return std::move(*failed);
  std::string text;
  if (auto err = read_all(fd.get(), text)) {
    if (err == EFBIG)
      return failure(backend_status::rejected,
                     fmt::format("file store {}: larger than {} bytes: not a "
                                 "lease record",
                                 path, max_lease_file_size));
    return io_failure(path, "cannot read", err);
  }
  if (text.empty() && !created)
    // Truncated, or its creator died before writing the first record: the
    // counter of fencing tokens is lost, and starting it again at 1 would
    // hand out a token a live holder may still use.
    return failure(backend_status::rejected,
                   fmt::format("file store {}: record file is empty but "
                               "existed: refusing to restart the token "
                               "counter; delete it only when no process "
                               "holds the lease",
                               path));
  auto file = decode_lease_file(text);
  if (!file)
    return failure(backend_status::rejected,
                   fmt::format("file store {}: corrupt record, {}", path,
                               file.error().message));
  auto rec = file->record;
  if (!text.empty() && file->boot_id != opts_.boot_id) {
    // Written before a reboot: CLOCK_MONOTONIC restarted, so expires_at
    // means nothing any more; the holder is gone, the tokens count on.
    rec.holder.clear();
    rec.acquisition = 0;
    rec.expires_at = timestamp{};
  }
  // The token counter file survives a record file deleted by hand: the
  // tokens keep increasing when the record is created again.
  auto counter_dir
    = (std::filesystem::path{opts_.directory} / counter_dir_name).string();
  auto counter_path
    = (std::filesystem::path{counter_dir} / lease_file_name(req.name)).string();
  uint64_t counter = 0;
  if (auto failed = read_counter(counter_path, counter)) {
    if (created)
      remove_unwritten(fd.get(), path);
    return std::move(*failed);
  }
  rec.last_token = std::max(rec.last_token, counter);
  auto before = rec;
  auto now = std::chrono::steady_clock::now();
  auto reply = apply(op, rec, req, now);
  reply.detail = "file store " + path;
  if (reply.status == backend_status::not_found)
    reply.detail += fmt::format(
      ": {}", created ? "the record file was missing (deleted by hand?): "
                        "the record disappeared"
                      : absence_of(before, now));
  if (rec.last_token > counter)
    if (auto failed
        = write_counter(counter_dir, counter_path, rec.last_token)) {
      if (created)
        remove_unwritten(fd.get(), path);
      return std::move(*failed);
    }
  // A file this call created is written even if the record stays fresh
  // (a renew or release of a missing record): left empty, it would look
  // truncated to the next call.
  if (rec == before && !created)
    return reply;
  if (auto err
      = write_record(fd.get(), encode_lease_file({opts_.boot_id, rec}));
      !err.empty()) {
    if (created)
      remove_unwritten(fd.get(), path);
    return failure(backend_status::unavailable,
                   fmt::format("file store {}: {}", path, err));
  }
  if (created)
    if (auto err = sync_directory(opts_.directory))
      return io_failure(opts_.directory, "cannot sync the directory", err);
  return reply;
}

} // namespace troupe::lease
