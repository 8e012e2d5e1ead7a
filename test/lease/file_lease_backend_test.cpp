// Integration tests of the file lease backend: real files, real OFD locks,
// real CLOCK_MONOTONIC (short ttls, generous bounds).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/errc.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/lease/outcome.hpp"

using namespace std::chrono_literals;
using namespace troupe::lease;
namespace fs = std::filesystem;

namespace {

using steady = std::chrono::steady_clock;

// A fresh directory under /tmp, removed with everything in it.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "troupe-file-lease-XXXXXX");
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::shared_ptr<file_lease_backend>
make_backend(const fs::path& dir, std::string boot_id = {},
             timespan lock_timeout = 500ms) {
  file_lease_backend_options opts;
  opts.directory = dir.string();
  opts.boot_id = std::move(boot_id);
  opts.lock_timeout = lock_timeout;
  auto result = file_lease_backend::make(opts);
  if (!result)
    FAIL(result.error().message);
  return *result;
}

// Runs one call and waits for its reply (which comes from the worker).
backend_reply call(lease_backend& b, backend_op op,
                   const backend_request& req) {
  auto reply = call_and_wait(b, op, req, 10s);
  if (!reply)
    FAIL("no reply within 10s to " << to_string(op));
  return *reply;
}

backend_request req(std::string owner, uint64_t acquisition, timespan ttl = 10s,
                    std::string name = "jobs") {
  return backend_request{std::move(name), std::move(owner), ttl, acquisition,
                         0};
}

std::string read_text(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << text;
}

lease_file_record decode_file(const fs::path& p) {
  auto rec = decode_lease_file(read_text(p));
  if (!rec)
    FAIL(rec.error().message);
  return *rec;
}

std::string render(const backend_reply& r) {
  return std::string{to_string(r.status)} + " holder=" + r.holder
         + " token=" + std::to_string(r.token) + " detail=" + r.detail;
}

// An exclusive OFD lock taken by the test itself: "another process", which
// writes a fresh record if it created the file (as a backend would).
struct foreign_lock {
  int fd = -1;
  explicit foreign_lock(const fs::path& p) {
    fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    REQUIRE(::fcntl(fd, F_OFD_SETLK, &fl) == 0);
    if (::lseek(fd, 0, SEEK_END) == 0) {
      auto text = encode_lease_file({"other-boot", lease_record{}});
      REQUIRE(::write(fd, text.data(), text.size())
              == static_cast<ssize_t>(text.size()));
    }
  }
  void unlock() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
  ~foreign_lock() {
    unlock();
  }
};

} // namespace

TEST_CASE("file_lease_backend: acquire, renew and release a record") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  auto file = dir.path / "jobs.lease";
  auto r = call(*b, backend_op::acquire, req("a", 11));
  INFO(render(r));
  REQUIRE(r.status == backend_status::ok);
  CHECK(r.holder == "a");
  CHECK(r.token == 1);
  CHECK(r.acquisition == 11);
  CHECK(r.detail == "file store " + file.string());
  auto stored = decode_file(file);
  CHECK(stored.record.holder == "a");
  CHECK(stored.record.token == 1);
  CHECK(stored.record.last_token == 1);
  CHECK(stored.record.expires_at > steady::now() + 5s);
  CHECK(stored.boot_id == b->options().boot_id);
  CHECK_FALSE(stored.boot_id.empty());

  r = call(*b, backend_op::renew, req("a", 11));
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 1);

  r = call(*b, backend_op::acquire, req("b", 22));
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "a");
  r = call(*b, backend_op::renew, req("b", 22));
  CHECK(r.status == backend_status::held);
  r = call(*b, backend_op::release, req("b", 22));
  CHECK(r.status == backend_status::held);

  r = call(*b, backend_op::release, req("a", 11));
  CHECK(r.status == backend_status::ok);
  stored = decode_file(file);
  CHECK(stored.record.holder.empty());
  CHECK(stored.record.last_token == 1);

  r = call(*b, backend_op::renew, req("a", 11));
  CHECK(r.status == backend_status::not_found);
  r = call(*b, backend_op::release, req("a", 11));
  CHECK(r.status == backend_status::not_found);
  CHECK(b->describe() == "file store " + dir.path.string());
}

TEST_CASE("file_lease_backend: tokens strictly increase across holders, "
          "re-acquisitions and releases") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  std::vector<uint64_t> tokens;
  auto grant = [&](std::string owner, uint64_t acq) {
    auto r = call(*b, backend_op::acquire, req(owner, acq));
    INFO(render(r));
    REQUIRE(r.status == backend_status::ok);
    tokens.push_back(r.token);
  };
  auto release = [&](std::string owner, uint64_t acq) {
    REQUIRE(call(*b, backend_op::release, req(owner, acq)).status
            == backend_status::ok);
  };
  grant("a", 1);
  release("a", 1);
  grant("a", 2); // same owner after a release
  auto retry = call(*b, backend_op::acquire, req("a", 2));
  CHECK(retry.status == backend_status::ok); // idempotent retry: same token
  CHECK(retry.token == tokens.back());
  // The same owner under another acquisition waits for the live record (a
  // delayed request of an old acquisition must not replace the current).
  CHECK(call(*b, backend_op::acquire, req("a", 3)).status
        == backend_status::held);
  release("a", 2);
  grant("a", 3);
  release("a", 3);
  grant("b", 4);
  release("b", 4);
  grant("c", 5);
  REQUIRE(tokens.size() == 5);
  for (size_t i = 1; i < tokens.size(); ++i)
    CHECK(tokens[i] > tokens[i - 1]);
  CHECK(decode_file(dir.path / "jobs.lease").record.last_token
        == tokens.back());
}

TEST_CASE("file_lease_backend: two backend objects on one directory see each "
          "other's records") {
  temp_dir dir;
  auto b1 = make_backend(dir.path);
  auto b2 = make_backend(dir.path);
  REQUIRE(call(*b1, backend_op::acquire, req("a", 1)).status
          == backend_status::ok);
  auto r = call(*b2, backend_op::acquire, req("b", 2));
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "a");
  CHECK(r.token == 1);
  // b2 may act on a's behalf: the record, not the object, decides.
  CHECK(call(*b2, backend_op::renew, req("a", 1)).status == backend_status::ok);
  CHECK(call(*b2, backend_op::release, req("a", 1)).status
        == backend_status::ok);
  b1.reset();
  auto b3 = make_backend(dir.path);
  r = call(*b3, backend_op::acquire, req("c", 3));
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 2); // the counter lives in the file, not the object
  // Another lease name is another file with its own counter.
  r = call(*b2, backend_op::acquire, req("a", 4, 10s, "other"));
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 1);
  CHECK(fs::exists(dir.path / "other.lease"));
}

TEST_CASE("file_lease_backend: a record expires after its ttl, not before") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  auto ttl = timespan{300ms};
  auto start = steady::now();
  auto r = call(*b, backend_op::acquire, req("a", 1, ttl));
  REQUIRE(r.status == backend_status::ok);
  auto granted = steady::now();
  auto stored = decode_file(dir.path / "jobs.lease");
  CHECK(stored.record.expires_at >= start + ttl);
  CHECK(stored.record.expires_at <= granted + ttl);
  // Well inside the ttl the record still counts.
  r = call(*b, backend_op::acquire, req("b", 2, ttl));
  if (steady::now() < start + ttl - 50ms)
    CHECK(r.status == backend_status::held);
  // b gets it after the ttl (polling, with a generous bound).
  backend_reply won;
  while (steady::now() < start + 5s) {
    won = call(*b, backend_op::acquire, req("b", 2, ttl));
    if (won.status == backend_status::ok)
      break;
    std::this_thread::sleep_for(20ms);
  }
  auto taken = steady::now();
  INFO(render(won));
  REQUIRE(won.status == backend_status::ok);
  CHECK(won.token == 2);
  CHECK(taken - start >= ttl);
  // An expired holder never resurrects its record: while b's record is
  // fresh a's renewal finds it held; on a machine that stalled past b's
  // ttl it finds nothing (not_found), but never ok.
  auto renewal = call(*b, backend_op::renew, req("a", 1, ttl));
  auto renewed = steady::now();
  INFO(render(renewal));
  CHECK(renewal.status != backend_status::ok);
  if (renewed < taken + ttl - 50ms)
    CHECK(renewal.status == backend_status::held);
  std::this_thread::sleep_for(ttl + 50ms);
  CHECK(call(*b, backend_op::renew, req("b", 2, ttl)).status
        == backend_status::not_found);
}

TEST_CASE("file_lease_backend: a corrupt record is rejected naming the file "
          "and the line, and left as it was") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [label, text, line]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"bad number", "version 1\nboot_id x\nholder a\nacquisition 1x\n",
          "line 4"},
      row{"binary garbage", std::string("\0\0\x17zz\n", 6), "line 1"},
      row{"future version", "version 2\n", "line 1"},
      row{"unknown key", "version 1\nboot_id x\nholder a\ncolour red\n",
          "line 4"},
      row{"missing end",
          "version 1\nboot_id x\nholder a\nacquisition 1\ntoken 1\n"
          "expires_at_ns 5\nlast_token 1\n",
          "line 8"},
      row{"token above last_token",
          "version 1\nboot_id x\nholder a\nacquisition 1\ntoken 9\n"
          "expires_at_ns 5\nlast_token 1\nend\n",
          "line 5"},
      row{"missing key",
          "version 1\nboot_id x\nholder a\nacquisition 1\ntoken 1\n"
          "last_token 1\nend\n",
          "line 7"},
    }));
  INFO(label);
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  write_text(file, text);
  auto b = make_backend(dir.path);
  for (auto op :
       {backend_op::acquire, backend_op::renew, backend_op::release}) {
    auto r = call(*b, op, req("a", 1));
    INFO(render(r));
    CHECK(r.status == backend_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains(file.string()));
    CHECK_THAT(r.detail, Catch::Contains(line));
  }
  CHECK(read_text(file) == text);
}

TEST_CASE("file_lease_backend: an existing empty record file is rejected, "
          "never read as a fresh record") {
  auto op
    = GENERATE(backend_op::acquire, backend_op::renew, backend_op::release);
  INFO(to_string(op));
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  write_text(file, ""); // a creator that died before its first write
  auto b = make_backend(dir.path);
  auto r = call(*b, op, req("a", 1));
  INFO(render(r));
  CHECK(r.status == backend_status::rejected);
  CHECK(r.detail
        == "file store " + file.string()
             + ": record file is empty but existed: refusing to restart the "
               "token counter; delete it only when no process holds the "
               "lease");
  CHECK(read_text(file).empty());
}

TEST_CASE("file_lease_backend: a truncated record file never hands out a "
          "token again while its holder may still use it") {
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  auto b = make_backend(dir.path);
  auto held = call(*b, backend_op::acquire, req("a", 1));
  REQUIRE(held.status == backend_status::ok);
  REQUIRE(held.token == 1);
  fs::resize_file(file, 0); // "a" still holds token 1
  auto other = make_backend(dir.path);
  auto r = call(*other, backend_op::acquire, req("b", 2));
  INFO(render(r));
  CHECK(r.status == backend_status::rejected);
  CHECK(r.token == 0);
  CHECK_THAT(r.detail, Catch::Contains(file.string()));
  CHECK(read_text(file).empty());
  // The operator's way out, once nobody holds the lease: delete the file.
  fs::remove(file);
  CHECK(call(*other, backend_op::acquire, req("b", 2)).status
        == backend_status::ok);
}

TEST_CASE("file_lease_backend: a call that creates the record file writes "
          "it, even when the record stays fresh") {
  auto op = GENERATE(backend_op::renew, backend_op::release);
  INFO(to_string(op));
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  auto b = make_backend(dir.path);
  CHECK(call(*b, op, req("a", 1)).status == backend_status::not_found);
  auto stored = decode_file(file);
  CHECK(stored.record == lease_record{});
  CHECK(stored.boot_id == b->options().boot_id);
  auto r = call(*b, backend_op::acquire, req("a", 1));
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 1);
}

TEST_CASE("file_lease_backend: a record path that is no regular file is "
          "rejected naming the path") {
  using row = std::tuple<std::string, std::function<void(const fs::path&)>,
                         std::string>;
  auto [label, make, says] = GENERATE(
    table<std::string, std::function<void(const fs::path&)>, std::string>({
      row{"dangling symlink",
          [](const fs::path& p) {
            fs::create_symlink(p.parent_path() / "gone", p);
          },
          "a symbolic link to "},
      row{"directory", [](const fs::path& p) { fs::create_directory(p); },
          "Is a directory"},
      row{"FIFO",
          [](const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0644) == 0); },
          "a FIFO, not a record file"},
    }));
  INFO(label);
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  make(file);
  auto b = make_backend(dir.path);
  auto r = call(*b, backend_op::acquire, req("a", 1));
  INFO(render(r));
  CHECK(r.status == backend_status::rejected);
  CHECK_THAT(r.detail, Catch::StartsWith("file store " + file.string() + ": "));
  CHECK_THAT(r.detail, Catch::Contains(says));
  CHECK_FALSE(fs::exists(dir.path / "gone"));
}

TEST_CASE("file_lease_backend: a lock held elsewhere reports unavailable after "
          "the bound, not a hang") {
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  auto b = make_backend(dir.path, {}, 200ms);
  foreign_lock lock{file};
  auto start = steady::now();
  auto r = call(*b, backend_op::acquire, req("a", 1));
  auto waited = steady::now() - start;
  INFO(render(r));
  CHECK(r.status == backend_status::unavailable);
  CHECK_THAT(r.detail, Catch::Contains(file.string()));
  CHECK_THAT(r.detail, Catch::Contains("locked"));
  CHECK(waited >= 200ms);
  CHECK(waited < 3s);
  lock.unlock();
  CHECK(call(*b, backend_op::acquire, req("a", 1)).status
        == backend_status::ok);
}

TEST_CASE("file_lease_backend: a lock released within the bound is waited "
          "for") {
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  auto b = make_backend(dir.path, {}, 3s);
  foreign_lock lock{file};
  std::thread unlocker{[&] {
    std::this_thread::sleep_for(150ms);
    lock.unlock();
  }};
  auto start = steady::now();
  auto r = call(*b, backend_op::acquire, req("a", 1));
  auto waited = steady::now() - start;
  unlocker.join();
  CHECK(r.status == backend_status::ok);
  CHECK(waited >= 100ms);
}

TEST_CASE("file_lease_backend: a record of another boot counts as expired but "
          "keeps last_token") {
  temp_dir dir;
  auto file = dir.path / "jobs.lease";
  {
    auto before_reboot = make_backend(dir.path, "boot-A");
    for (uint64_t acq = 1; acq <= 3; ++acq) {
      auto r = call(*before_reboot, backend_op::acquire, req("a", acq, 1h));
      REQUIRE(r.status == backend_status::ok);
      if (acq < 3)
        REQUIRE(
          call(*before_reboot, backend_op::release, req("a", acq, 1h)).status
          == backend_status::ok);
    }
  }
  REQUIRE(decode_file(file).boot_id == "boot-A");
  auto after_reboot = make_backend(dir.path, "boot-B");
  CHECK(call(*after_reboot, backend_op::renew, req("a", 3, 1h)).status
        == backend_status::not_found);
  auto r = call(*after_reboot, backend_op::acquire, req("b", 9, 1h));
  INFO(render(r));
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 4);
  auto stored = decode_file(file);
  CHECK(stored.boot_id == "boot-B");
  CHECK(stored.record.holder == "b");
  CHECK(stored.record.last_token == 4);
}

TEST_CASE("file_lease_backend: the real boot id is read from /proc") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  std::ifstream in{"/proc/sys/kernel/random/boot_id"};
  std::string id;
  std::getline(in, id);
  CHECK(b->options().boot_id == id);
}

TEST_CASE("file_lease_backend: owner text cannot break the record format") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  std::string evil = "x\nversion 2\nholder y %41 \r\t";
  auto r = call(*b, backend_op::acquire, req(evil, 1));
  REQUIRE(r.status == backend_status::ok);
  auto text = read_text(dir.path / "jobs.lease");
  CHECK(std::count(text.begin(), text.end(), '\n') == 8);
  CHECK(decode_file(dir.path / "jobs.lease").record.holder == evil);
  r = call(*b, backend_op::acquire, req("other", 2));
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == evil);
}

TEST_CASE("file_lease_backend: the record format round-trips") {
  lease_file_record x{"5d1c-boot",
                      lease_record{"w a%b", 77, 5, timestamp{123456789ns}, 6}};
  auto text = encode_lease_file(x);
  CHECK(text
        == "version 1\nboot_id 5d1c-boot\nholder w%20a%25b\nacquisition 77\n"
           "token 5\nexpires_at_ns 123456789\nlast_token 6\nend\n");
  auto back = decode_lease_file(text);
  REQUIRE(back.has_value());
  CHECK(*back == x);
  // Bytes after `end` (a longer earlier record, truncate not reached).
  auto tail = decode_lease_file(text + "n_ns 99\nlast_token 4\nend\n");
  REQUIRE(tail.has_value());
  CHECK(*tail == x);
  lease_file_record released{"b", lease_record{"", 0, 5, {}, 5}};
  CHECK(*decode_lease_file(encode_lease_file(released)) == released);
}

TEST_CASE("file_lease_backend: lease names map to file names inside the "
          "directory") {
  using row = std::pair<std::string, std::string>;
  auto [name, file] = GENERATE(table<std::string, std::string>({
    row{"jobs", "jobs.lease"},
    row{"a/b", "a%2Fb.lease"},
    row{"..", "%2E..lease"},
    row{"../up", "%2E.%2Fup.lease"},
    row{"sp ace%", "sp%20ace%25.lease"},
    row{"ünï", "%C3%BCn%C3%AF.lease"},
  }));
  CHECK(lease_file_name(name) == file);
  CHECK(unescape_lease_text(escape_lease_text(name)) == name);
  temp_dir dir;
  auto b = make_backend(dir.path);
  REQUIRE(call(*b, backend_op::acquire, req("a", 1, 10s, name)).status
          == backend_status::ok);
  CHECK(fs::exists(dir.path / file));
  CHECK(b->path_of(name) == (dir.path / file).string());
}

TEST_CASE("file_lease_backend: names too long for a file name are rejected") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  lease_settings s;
  s.name = std::string(100, '/'); // 300 bytes escaped
  s.owner = "a";
  auto err = b->validate(s.with_defaults());
  CHECK(err.code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK_THAT(err.message, Catch::Contains("name"));
  s.name = std::string(249, 'n'); // 249 + ".lease" = 255
  CHECK_FALSE(b->validate(s.with_defaults()));
  auto r
    = call(*b, backend_op::acquire, req("a", 1, 10s, std::string(100, '/')));
  CHECK(r.status == backend_status::rejected);
}

TEST_CASE("file_lease_backend: make creates the directory or names the path "
          "that failed") {
  temp_dir dir;
  auto nested = dir.path / "x" / "y";
  auto b = make_backend(nested);
  CHECK(fs::is_directory(nested));
  write_text(dir.path / "plain", "not a directory");
  file_lease_backend_options opts;
  opts.directory = (dir.path / "plain" / "sub").string();
  auto bad = file_lease_backend::make(opts);
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains(opts.directory));
  // The directory removed behind the backend's back is created again.
  fs::remove_all(nested);
  CHECK(call(*b, backend_op::acquire, req("a", 1)).status
        == backend_status::ok);
}

TEST_CASE("file_lease_backend: the destructor finishes queued calls") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  REQUIRE(call(*b, backend_op::acquire, req("a", 1)).status
          == backend_status::ok);
  std::atomic<int> replies{0};
  for (int i = 0; i < 5; ++i)
    b->renew(req("a", 1), [&](backend_reply) { ++replies; });
  b->release(req("a", 1), [&](backend_reply r) {
    if (r.status == backend_status::ok)
      ++replies;
  });
  b.reset(); // returns only after every call above replied
  CHECK(replies == 6);
  CHECK(decode_file(dir.path / "jobs.lease").record.holder.empty());
}

TEST_CASE("file_lease_backend: concurrent first acquisitions through many "
          "objects: exactly one wins, none is rejected") {
  // The loser of the race to create the record file must never see it
  // before its creator holds the lock (it would read an empty file it did
  // not create: rejected).
  temp_dir dir;
  constexpr int contenders = 4;
  std::vector<std::shared_ptr<file_lease_backend>> backends;
  for (int i = 0; i < contenders; ++i)
    backends.push_back(make_backend(dir.path));
  for (int round = 0; round < 200; ++round) {
    auto name = "race-" + std::to_string(round);
    std::atomic<int> ready{0};
    std::vector<backend_reply> replies(contenders);
    std::vector<std::thread> threads;
    for (int i = 0; i < contenders; ++i)
      threads.emplace_back([&, i] {
        ++ready;
        while (ready < contenders)
          std::this_thread::yield();
        auto r
          = call_and_wait(*backends[i], backend_op::acquire,
                          req("owner-" + std::to_string(i), 1, 10s, name), 10s);
        replies[i].status = backend_status::unavailable;
        replies[i].detail = "no reply within 10s";
        if (r)
          replies[i] = *r;
      });
    for (auto& t : threads)
      t.join();
    int winners = 0;
    for (auto& r : replies) {
      INFO("round " << round << ": " << render(r));
      CHECK(r.status != backend_status::rejected);
      winners += r.status == backend_status::ok ? 1 : 0;
    }
    INFO("round " << round);
    CHECK(winners == 1);
  }
  // No temporary file of a creation is left behind; besides the records
  // there is only the directory of the token counters, one per name.
  size_t files = 0;
  for (auto& entry : fs::directory_iterator{dir.path}) {
    INFO(entry.path());
    if (entry.path().filename() == ".tokens")
      continue;
    CHECK(entry.path().extension() == ".lease");
    ++files;
  }
  CHECK(files == 200);
  size_t counters = 0;
  for (auto& entry : fs::directory_iterator{dir.path / ".tokens"}) {
    INFO(entry.path());
    CHECK(read_text(entry.path()) == "1\n");
    ++counters;
  }
  CHECK(counters == 200);
}

// -- a record file deleted by hand -------------------------------------------

TEST_CASE("file lease: record file deleted by hand while held -> lost at the "
          "next renewal, re-acquire gets a greater token") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  auto file = dir.path / "jobs.lease";
  auto counter = dir.path / ".tokens" / "jobs.lease";
  auto a1 = req("a", 11);
  REQUIRE(call(*b, backend_op::acquire, req("x", 5)).status
          == backend_status::ok);
  REQUIRE(call(*b, backend_op::release, req("x", 5)).status
          == backend_status::ok);
  auto first = call(*b, backend_op::acquire, a1);
  REQUIRE(first.status == backend_status::ok);
  REQUIRE(first.token == 2);
  CHECK(read_text(counter) == "2\n");
  REQUIRE(fs::remove(file)); // rm jobs.lease
  auto r = call(*b, backend_op::renew, a1);
  INFO(render(r));
  CHECK(r.status == backend_status::not_found);
  CHECK(classify(backend_op::renew, r, "a", 11).kind == outcome_kind::lost);
  CHECK(r.detail
        == "file store " + file.string()
             + ": the record file was missing (deleted by hand?): "
               "the record disappeared");
  // The renewal re-created the record without a holder, with the counter.
  auto stored = decode_file(file);
  CHECK(stored.record.holder.empty());
  CHECK(stored.record.last_token == 2);
  // A second renewal finds a record without a holder: still lost.
  auto again = call(*b, backend_op::renew, a1);
  CHECK(again.status == backend_status::not_found);
  CHECK_THAT(again.detail, Catch::Contains("has no holder"));
  auto second = call(*b, backend_op::acquire, req("a", 12));
  INFO(render(second));
  REQUIRE(second.status == backend_status::ok);
  CHECK(second.token == 3);
  CHECK(read_text(counter) == "3\n");
  CHECK(decode_file(file).record.last_token == 3);
}

TEST_CASE("file_lease_backend: a record file deleted by hand and acquired by "
          "another owner before the holder renews: tokens keep increasing, "
          "the holder's renewal answers held (lost)") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  auto file = dir.path / "jobs.lease";
  auto a1 = req("a", 11);
  REQUIRE(call(*b, backend_op::acquire, a1).token == 1);
  REQUIRE(fs::remove(file));
  auto rival = call(*b, backend_op::acquire, req("b", 22));
  REQUIRE(rival.status == backend_status::ok);
  CHECK(rival.token == 2); // not 1 again: the counter file survived
  auto r = call(*b, backend_op::renew, a1);
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "b");
  CHECK(classify(backend_op::renew, r, "a", 11).kind == outcome_kind::lost);
}

TEST_CASE("file_lease_backend: a corrupt token counter is rejected naming the "
          "file, never reset") {
  temp_dir dir;
  auto b = make_backend(dir.path);
  REQUIRE(call(*b, backend_op::acquire, req("a", 11)).token == 1);
  auto counter = dir.path / ".tokens" / "jobs.lease";
  write_text(counter, "seven\n");
  auto r = call(*b, backend_op::renew, req("a", 11));
  CHECK(r.status == backend_status::rejected);
  CHECK(r.detail
        == "file store " + counter.string()
             + ": corrupt token counter \"seven\\x0a\" (expected "
               "the last issued token, a decimal number)");
  write_text(counter, "7");
  REQUIRE(call(*b, backend_op::release, req("a", 11)).status
          == backend_status::ok);
  // A counter above the record's last_token wins.
  CHECK(call(*b, backend_op::acquire, req("a", 12)).token == 8);
  CHECK(read_text(counter) == "8\n");
}
