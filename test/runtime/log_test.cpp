#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <memory>

#include <unistd.h>

#include "troupe/runtime/log.hpp"

using namespace troupe::runtime;

namespace {

// Installs a capture sink as the only sink for one test.
struct capture_fixture {
  std::shared_ptr<capture_sink> sink = std::make_shared<capture_sink>();
  log_level old_level = current_log_level();

  capture_fixture() {
    set_log_sinks({sink});
  }

  ~capture_fixture() {
    set_log_sinks({make_stderr_sink()});
    set_log_level(old_level);
  }
};

} // namespace

TEST_CASE_METHOD(capture_fixture, "log: records carry level and component") {
  set_log_level(log_level::info);
  logger log{"lease"};
  log.info("acquired \"{}\" (token {})", "jobs", 7);
  log.debug("not shown at info");
  auto records = sink->records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].level == log_level::info);
  CHECK(records[0].component == "lease");
  CHECK(records[0].message == "acquired \"jobs\" (token 7)");
}

TEST_CASE_METHOD(capture_fixture, "log: the level filters records") {
  logger log{"x"};
  set_log_level(log_level::warning);
  log.info("a");
  log.warning("b");
  log.error("c");
  CHECK(sink->records().size() == 2);
  set_log_level(log_level::off);
  log.error("d");
  CHECK(sink->records().size() == 2);
}

TEST_CASE_METHOD(capture_fixture, "log: secrets render as <redacted>") {
  logger log{"etcd"};
  secret password{"hunter2"};
  log.info("authenticating as root with {}", password);
  CHECK(sink->contains("<redacted>"));
  CHECK_FALSE(sink->contains("hunter2"));
  CHECK(password.reveal() == "hunter2");
}

TEST_CASE("log: level names parse and bad names are named in the error") {
  CHECK(*parse_log_level("warn") == log_level::warning);
  CHECK(*parse_log_level("debug") == log_level::debug);
  auto bad = parse_log_level("loud");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("\"loud\""));
}

TEST_CASE("log: JSON lines sink writes one escaped object per line") {
  char path[] = "/tmp/troupe-log-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  {
    auto sink = make_json_lines_sink(path);
    REQUIRE(sink);
    log_record r{std::chrono::system_clock::now(), log_level::warning, "lease",
                 "quote \" and\nnewline"};
    (*sink)->write(r);
    (*sink)->write(r);
  }
  std::ifstream in{path};
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    CHECK_THAT(line, Catch::StartsWith("{\"time\":\""));
    CHECK_THAT(line, Catch::Contains("\"level\":\"warning\""));
    CHECK_THAT(line, Catch::Contains("\"component\":\"lease\""));
    CHECK_THAT(line,
               Catch::Contains("\"message\":\"quote \\\" and\\nnewline\"}"));
  }
  CHECK(lines == 2);
  std::remove(path);
}

TEST_CASE("log: a JSON sink on an unwritable path is an error naming it") {
  auto sink = make_json_lines_sink("/dev/null/x/log.jsonl");
  REQUIRE_FALSE(sink);
  CHECK_THAT(sink.error().message, Catch::Contains("/dev/null/x"));
}
