// Multi-process acceptance test of the file lease: real lease_contender
// processes (real node, lease actor, handle and file backend) compete for
// one lease; holders are killed (SIGKILL) or stopped (SIGTERM). Mutual
// exclusion and fencing are judged from the contenders' claim log alone.

#include <catch2/catch.hpp>

#include "troupe/test/child_process.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TROUPE_LEASE_CONTENDER
#  error "TROUPE_LEASE_CONTENDER must name the lease_contender executable"
#endif

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using steady = std::chrono::steady_clock;
using troupe::test::child;
using troupe::test::temp_dir;

int64_t now_ns() {
  return steady::now().time_since_epoch().count();
}

// A claim line: "<owner> <token> <begin_ns> <end_ns>".
struct claim {
  std::string owner;
  uint64_t token = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

std::vector<claim> read_claims(const fs::path& log) {
  std::ifstream in{log};
  std::vector<claim> result;
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof())
      break; // a line without its newline: still being written
    std::istringstream fields{line};
    claim c;
    if (!(fields >> c.owner >> c.token >> c.begin >> c.end))
      FAIL("malformed claim line: \"" << line << "\"");
    result.push_back(std::move(c));
  }
  return result;
}

std::optional<claim> highest(const std::vector<claim>& claims) {
  std::optional<claim> result;
  for (auto& c : claims)
    if (!result || c.token > result->token)
      result = c;
  return result;
}

// The verdict from the log alone: per token one owner and one begin;
// tokens strictly increase in order of begin; the ranges [begin, last end]
// of different tokens do not overlap. Returns the distinct owners.
std::set<std::string> verify_claims(const std::vector<claim>& claims) {
  struct tenure {
    std::string owner;
    int64_t begin = 0;
    int64_t end = 0;
  };
  std::map<uint64_t, tenure> by_token;
  for (auto& c : claims) {
    INFO(c.owner << " " << c.token << " " << c.begin << " " << c.end);
    REQUIRE(c.begin <= c.end);
    auto [i, added]
      = by_token.emplace(c.token, tenure{c.owner, c.begin, c.end});
    if (!added) {
      REQUIRE(i->second.owner == c.owner);
      REQUIRE(i->second.begin == c.begin);
      i->second.end = std::max(i->second.end, c.end);
    }
  }
  std::vector<std::pair<uint64_t, tenure>> order(by_token.begin(),
                                                 by_token.end());
  std::sort(order.begin(), order.end(),
            [](auto& x, auto& y) { return x.second.begin < y.second.begin; });
  std::set<std::string> owners;
  for (size_t i = 0; i < order.size(); ++i) {
    owners.insert(order[i].second.owner);
    if (i == 0)
      continue;
    auto& [prev_token, prev] = order[i - 1];
    auto& [token, cur] = order[i];
    INFO("token " << prev_token << " (" << prev.owner << ") held ["
                  << prev.begin << ", " << prev.end << "], token " << token
                  << " (" << cur.owner << ") from " << cur.begin);
    CHECK(token > prev_token);
    CHECK(prev.end < cur.begin);
  }
  return owners;
}

struct contenders {
  temp_dir dir;
  fs::path log = dir.path / "claims.log";
  std::vector<std::unique_ptr<child>> procs;

  contenders(int n, const std::string& ttl) {
    for (int i = 0; i < n; ++i) {
      auto owner = "c" + std::to_string(i);
      procs.push_back(std::make_unique<child>(
        owner,
        std::vector<std::string>{TROUPE_LEASE_CONTENDER, "--dir",
                                 (dir.path / "leases").string(), "--owner",
                                 owner, "--ttl", ttl, "--log", log.string()},
        dir.path / (owner + ".out")));
      REQUIRE(procs.back()->pid() > 0);
    }
  }

  ~contenders() {
    if (std::uncaught_exceptions() > 0) // a REQUIRE failed: show why
      std::fprintf(stderr, "%s\n", outputs().c_str());
    // SIGTERM everyone first so they release, then wait (SIGKILL on bound).
    for (auto& p : procs) {
      p->signal(SIGTERM);
      p->signal(SIGCONT); // a frozen one must run to act on SIGTERM
    }
    for (auto& p : procs)
      p->stop(10s);
  }

  // Polls the log until a claim with a token above `above` exists; fails
  // at once if a contender exited by itself.
  std::optional<claim> wait_for_holder(uint64_t above,
                                       std::chrono::milliseconds bound) {
    auto until = steady::now() + bound;
    while (steady::now() < until) {
      for (auto& p : procs)
        if (p->crashed())
          FAIL("contender " << p->owner() << " exited by itself\n"
                            << outputs());
      if (auto h = highest(read_claims(log)); h && h->token > above)
        return h;
      std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
  }

  // Polls the log until `token`'s claims span `span` (the holder renewed
  // and kept believing it holds the lease); false after `bound`.
  bool wait_for_tenure(uint64_t token, std::chrono::milliseconds span,
                       std::chrono::milliseconds bound) {
    auto until = steady::now() + bound;
    while (steady::now() < until) {
      for (auto& c : read_claims(log))
        if (c.token == token && c.end - c.begin >= span.count() * 1'000'000)
          return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  child& by_owner(const std::string& owner) {
    for (auto& p : procs)
      if (p->owner() == owner)
        return *p;
    FAIL("no contender named " << owner);
    throw std::logic_error("unreachable");
  }

  // No contender had a call refused: the three start at once on a fresh
  // directory, so a loser of the race to create the record file that saw
  // it before its creator locked it would report it as empty (rejected).
  void check_no_rejection() const {
    auto text = outputs();
    INFO(text);
    CHECK_THAT(text, !Catch::Contains("backend_rejected"));
  }

  std::string outputs() const {
    std::string result;
    for (auto& p : procs) {
      std::ifstream in{dir.path / (p->owner() + ".out")};
      std::string text{std::istreambuf_iterator<char>{in}, {}};
      if (text.size() > 3000)
        text = "..." + text.substr(text.size() - 3000);
      result += "---- " + p->owner() + "\n" + text;
    }
    return result;
  }
};

double seconds(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

} // namespace

TEST_CASE("file lease, 3 processes: SIGKILLed holders are replaced, one "
          "holder at a time, tokens increasing") {
  contenders all{3, "1s"};
  INFO("directory " << all.dir.path);
  auto first = all.wait_for_holder(0, 30s);
  REQUIRE(first.has_value());
  auto holder = *first;
  std::vector<double> takeovers;
  for (int kill = 0; kill < 2; ++kill) {
    // Hold through a few renewals (ttl/3 each) before the kill.
    REQUIRE(all.wait_for_tenure(holder.token, 1500ms, 10s));
    auto& victim = all.by_owner(holder.owner);
    auto killed_at = now_ns();
    victim.signal(SIGKILL);
    REQUIRE(victim.reap(5s));
    auto next = all.wait_for_holder(holder.token, 15s);
    INFO("after killing " << holder.owner << " (token " << holder.token << ")");
    REQUIRE(next.has_value());
    CHECK(next->owner != holder.owner);
    takeovers.push_back(seconds(next->begin - killed_at));
    holder = *next;
  }
  for (size_t i = 0; i < takeovers.size(); ++i)
    std::printf("file lease SIGKILL takeover %zu: %.3f s (ttl 1 s)\n", i + 1,
                takeovers[i]);
  for (auto t : takeovers) {
    // Not before the dead holder's record can have expired (its last
    // renewal was at most renewal_interval = ttl/3 before the kill) ...
    CHECK(t > 0.5);
    // ... and soon after (ttl + a poll + one acquire; generous bound).
    CHECK(t < 5.0);
  }
  // Everybody stops; then judge from the log alone.
  REQUIRE(all.wait_for_tenure(holder.token, 500ms, 10s));
  for (auto& p : all.procs)
    p->signal(SIGTERM);
  for (auto& p : all.procs)
    CHECK(p->stop(10s));
  auto claims = read_claims(all.log);
  CHECK(claims.size() > 100); // up to 100 per second of holding
  auto owners = verify_claims(claims);
  CHECK(owners.size() >= 3);
  all.check_no_rejection();
}

TEST_CASE("file lease, 3 processes: a SIGTERMed holder releases, another "
          "takes over well before the ttl (scenario S6, graceful path)") {
  contenders all{3, "5s"};
  INFO("directory " << all.dir.path);
  auto first = all.wait_for_holder(0, 30s);
  REQUIRE(first.has_value());
  // Let it hold through a renewal (ttl/3) before stopping it.
  REQUIRE(all.wait_for_tenure(first->token, 2000ms, 10s));
  auto& holder = all.by_owner(first->owner);
  auto stopped_at = now_ns();
  holder.signal(SIGTERM);
  auto next = all.wait_for_holder(first->token, 10s);
  REQUIRE(next.has_value());
  auto takeover = seconds(next->begin - stopped_at);
  std::printf("file lease SIGTERM takeover: %.3f s (ttl 5 s)\n", takeover);
  CHECK(next->owner != first->owner);
  CHECK(takeover < 2.5);
  REQUIRE(holder.reap(10s));
  REQUIRE(holder.status().has_value());
  CHECK(WIFEXITED(*holder.status()));
  CHECK(WEXITSTATUS(*holder.status()) == 0);
  REQUIRE(all.wait_for_tenure(next->token, 500ms, 10s));
  for (auto& p : all.procs)
    p->signal(SIGTERM);
  for (auto& p : all.procs)
    CHECK(p->stop(10s));
  auto owners = verify_claims(read_claims(all.log));
  CHECK(owners.size() >= 2);
  all.check_no_rejection();
}

TEST_CASE("file lease, 3 processes: a SIGSTOPped holder loses the lease and, "
          "resumed, claims nothing more with its old token") {
  contenders all{3, "1s"};
  INFO("directory " << all.dir.path);
  auto first = all.wait_for_holder(0, 30s);
  REQUIRE(first.has_value());
  REQUIRE(all.wait_for_tenure(first->token, 500ms, 10s));
  auto& frozen = all.by_owner(first->owner);
  std::optional<claim> next;
  // A process frozen inside a backend call keeps the file lock (by design
  // nobody can then take over); thaw it and freeze it again in that case.
  for (int attempt = 0; attempt < 3 && !next; ++attempt) {
    frozen.signal(SIGSTOP);
    next = all.wait_for_holder(first->token, 5s);
    if (!next)
      frozen.signal(SIGCONT);
  }
  REQUIRE(next.has_value());
  CHECK(next->owner != first->owner);
  REQUIRE(all.wait_for_tenure(next->token, 300ms, 10s));
  auto resumed_at = now_ns();
  frozen.signal(SIGCONT);
  // Give the resumed process time to act on its stale belief, if it would.
  REQUIRE(all.wait_for_tenure(next->token, 1500ms, 10s));
  for (auto& p : all.procs)
    p->signal(SIGTERM);
  for (auto& p : all.procs)
    CHECK(p->stop(10s));
  auto claims = read_claims(all.log);
  for (auto& c : claims)
    if (c.token == first->token) {
      INFO("claim of the frozen holder ending " << (c.end - resumed_at)
                                                << " ns after its resumption");
      CHECK(c.end < resumed_at);
    }
  verify_claims(claims);
  all.check_no_rejection();
}

TEST_CASE("lease_contender: a bad duration flag is named with the reason") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [flag, value, says]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"--ttl", "5", "--ttl: bad duration \"5\": missing unit"},
      row{"--poll", "1x", "--poll: bad duration \"1x\": unknown unit \"x\""},
    }));
  temp_dir dir;
  auto out = dir.path / "out";
  child c{"c0",
          {TROUPE_LEASE_CONTENDER, "--dir", (dir.path / "leases").string(),
           "--owner", "c0", "--log", (dir.path / "log").string(), flag, value},
          out};
  REQUIRE(c.reap(10s));
  REQUIRE(c.status().has_value());
  CHECK(WIFEXITED(*c.status()));
  CHECK(WEXITSTATUS(*c.status()) == 2);
  std::ifstream in{out};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  CHECK_THAT(text, Catch::Contains("lease_contender: " + says));
}
