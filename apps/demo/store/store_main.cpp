// troupe-demo-store: the demo's separate store (the oracle's data; the
// nodes never judge themselves). Serves store_service.hpp's API over
// management::http_server and appends every ledger accept and reject to
// DIR/ledger.jsonl and every deposit decision to DIR/journal.jsonl.
//
// Usage: troupe-demo-store [--bind 127.0.0.1] [--port 7070] --dir DIR
// Its first stdout line is `listening on HOST:PORT` (the chosen port when
// --port is 0). SIGTERM or SIGINT: stops serving and exits 0. Exit 2: bad
// flags, an unusable DIR or a port it cannot bind (named on stderr); exit 1:
// a log file could not be written (the store stops rather than answer
// without a record).

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "process/listen_cli.hpp"
#include "store/store_service.hpp"
#include "troupe/management/http_server.hpp"
#include "troupe/runtime/stop_signal.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::demo::store;

namespace {

int fail(const std::string& why) {
  std::cerr << "troupe-demo-store: " << why << '\n';
  return 2;
}

// An append-only log file that must start empty (the store keeps no state
// across runs, so old lines would contradict its answers).
class log_file {
public:
  ~log_file() {
    if (fd_ >= 0)
      ::close(fd_);
  }

  // An error text naming the file, or "".
  std::string open(fs::path path) {
    path_ = std::move(path);
    fd_
      = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return fmt::format("{}: {}", path_.string(), std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      return fmt::format("{}: {}", path_.string(), std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      return fmt::format("{}: not a regular file", path_.string());
    if (st.st_size > 0)
      return fmt::format("{} already holds {} bytes: the store starts empty, "
                         "give it a fresh --dir",
                         path_.string(), st.st_size);
    return {};
  }

  // An error text naming the file, or "".
  std::string append(const std::string& line) {
    size_t done = 0;
    while (done < line.size()) {
      auto n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return fmt::format("cannot append to {}: {}", path_.string(),
                           std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    return {};
  }

private:
  fs::path path_;
  int fd_ = -1;
};

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"troupe-demo-store: the demo's fenced ledger and account "
               "journal, over HTTP",
               "troupe-demo-store"};
  demo::process::listen_flags where;
  where.port = 7070;
  demo::process::add_listen_flags(app, where);
  std::string dir;
  app
    .add_option("--dir", dir,
                "Directory for ledger.jsonl and journal.jsonl (created if "
                "missing)")
    ->required();
  if (auto code
      = demo::process::parse_cli(app, argc, argv, "troupe-demo-store"))
    return *code;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(fmt::format("--dir {}: {}", dir, ec.message()));
  log_file ledger_log;
  log_file journal_log;
  if (auto err = ledger_log.open(fs::path{dir} / "ledger.jsonl"); !err.empty())
    return fail(err);
  if (auto err = journal_log.open(fs::path{dir} / "journal.jsonl");
      !err.empty())
    return fail(err);
  // A launcher that stopped reading our output must not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  runtime::install_stop_signal_handlers();
  store_service service;
  std::atomic<bool> write_failed = false;
  auto handler = [&](const management::http_request& req) {
    log_time at{std::chrono::steady_clock::now().time_since_epoch().count(),
                std::chrono::system_clock::now()};
    auto reply = service.handle(req, at);
    std::string err;
    if (!reply.ledger_line.empty())
      err = ledger_log.append(reply.ledger_line);
    if (err.empty() && !reply.journal_line.empty())
      err = journal_log.append(reply.journal_line);
    if (!err.empty()) {
      // Answering without a record would let the verdict miss a decision.
      std::cerr << "troupe-demo-store: " << err << '\n';
      write_failed = true;
      runtime::request_stop();
      return management::http_response{
        500, "application/json", render_error(err), {}};
    }
    return std::move(reply.response);
  };
  management::http_server_settings settings;
  settings.bind = where.bind;
  settings.port = static_cast<uint16_t>(where.port);
  settings.max_connections = 512;
  auto server = management::http_server::start(settings, handler);
  if (!server)
    return fail(server.error().message);
  std::cout << demo::process::listening_line(where.bind, (*server)->port())
            << std::endl;
  while (!runtime::sleep_unless_stopped(1s))
    continue;
  (*server)->stop();
  auto& ledger = service.ledger();
  auto totals = service.journal().totals();
  std::cerr << fmt::format(
    "troupe-demo-store: stopped (ledger: {} accepted, {} rejected; journal: "
    "{} accounts, {} deposits applied, {} conflicts, {} duplicates)\n",
    ledger.accepted(), ledger.rejected(), totals.accounts, totals.applied,
    totals.conflicts, totals.duplicates);
  return write_failed ? 1 : 0;
}
