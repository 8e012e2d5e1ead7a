#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/errc.hpp"

using namespace std::chrono_literals;
using namespace troupe::runtime;
using strings = std::vector<std::string>;

namespace {

/// The schema of these tests: one key of each type, with bounds.
const config_schema& test_schema() {
  static const config_schema schema = [] {
    config_schema s;
    s.add({.name = "app.name",
           .default_value = "demo",
           .description = "The application's name."});
    s.add({.name = "app.mode",
           .default_value = "safe",
           .description = "How to run | fast or safe.",
           .allowed = {"fast", "safe"}});
    s.add({.name = "app.workers",
           .type = config_type::integer,
           .default_value = "4",
           .description = "Worker threads.",
           .min_integer = 1,
           .max_integer = 64});
    s.add({.name = "app.debug",
           .type = config_type::boolean,
           .default_value = "false",
           .description = "Debug mode."});
    s.add({.name = "app.ratio",
           .type = config_type::real,
           .default_value = "0.5",
           .description = "A ratio."});
    s.add({.name = "lease.ttl",
           .type = config_type::duration,
           .default_value = "15s",
           .description = "Lease time to live.",
           .min_duration = 1ns});
    s.add({.name = "cluster.seed_nodes",
           .type = config_type::string_list,
           .description = "Seed nodes as host:port."});
    s.add({.name = "db.password",
           .type = config_type::secret,
           .default_value = "default-s3cret",
           .description = "The database password."});
    return s;
  }();
  return schema;
}

/// A file under /tmp with the given content, removed on destruction.
class temp_file {
public:
  explicit temp_file(const std::string& content) {
    char name[] = "/tmp/troupe_config_test_XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    path_ = name;
    auto written = ::write(fd, content.data(), content.size());
    ::close(fd);
    REQUIRE(written == static_cast<ssize_t>(content.size()));
  }

  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  ~temp_file() {
    ::unlink(path_.c_str());
  }

  const std::string& path() const {
    return path_;
  }

private:
  std::string path_;
};

/// The layer a test input goes to.
enum class source { file, env, flag };

/// The input as sources: file content, NAME=value, or an argument.
void add_input(config_sources& src, source kind, const std::string& input,
               std::optional<temp_file>& file) {
  switch (kind) {
    case source::file:
      file.emplace(input);
      src.file = file->path();
      break;
    case source::env: {
      auto eq = input.find('=');
      src.env.emplace_back(input.substr(0, eq), input.substr(eq + 1));
      break;
    }
    case source::flag:
      src.args.push_back(input);
  }
}

struct load_result {
  expected<config> cfg;
  std::string path; // of the temporary file, if any
};

load_result load_one(source kind, const std::string& input) {
  config_sources src;
  std::optional<temp_file> file;
  add_input(src, kind, input, file);
  return {load_config(test_schema(), src), file ? file->path() : ""};
}

/// `text` with "{path}" replaced by `path`.
std::string with_path(std::string text, const std::string& path) {
  if (auto pos = text.find("{path}"); pos != std::string::npos)
    text.replace(pos, 6, path);
  return text;
}

uint8_t code_of(errc x) {
  return static_cast<uint8_t>(x);
}

} // namespace

// -- durations ----------------------------------------------------------------

TEST_CASE("parse_duration: text with a unit round-trips through render") {
  using row = std::tuple<std::string, timespan, std::string>;
  auto [text, value, rendered]
    = GENERATE(table<std::string, timespan, std::string>({
      row{"20s", 20s, "20s"},
      row{"500ms", 500ms, "500ms"},
      row{"1.5s", 1500ms, "1500ms"},
      row{"250us", 250us, "250us"},
      row{"100ns", 100ns, "100ns"},
      row{"5m", 5min, "5m"},
      row{"1h", 1h, "1h"},
      row{"90m", 90min, "90m"},
      row{"60s", 1min, "1m"},
      row{"0s", 0s, "0s"},
      row{"0ms", 0s, "0s"},
      row{"0.5ms", 500us, "500us"},
      row{"2.25h", 135min, "135m"},
      row{"1.000s", 1s, "1s"},
      row{"0.000000001s", 1ns, "1ns"},
      row{"2562047h", 2562047h, "2562047h"},
    }));
  INFO(text);
  auto parsed = parse_duration(text);
  REQUIRE(parsed);
  CHECK(*parsed == value);
  CHECK(render_duration(*parsed) == rendered);
  auto again = parse_duration(rendered);
  REQUIRE(again);
  CHECK(*again == value);
}

TEST_CASE("parse_duration: bare numbers, negatives, unknown units rejected") {
  using row = std::tuple<std::string, std::string>;
  auto [text, why] = GENERATE(table<std::string, std::string>({
    row{"", "expected a number with a unit"},
    row{"5", "missing unit (expected ns, us, ms, s, m, h)"},
    row{"0", "missing unit"},
    row{"1.5", "missing unit"},
    row{"-5s", "negative durations are not allowed"},
    row{"5x", "unknown unit \"x\" (expected ns, us, ms, s, m, h)"},
    row{"5S", "unknown unit \"S\""},
    row{"5 s", "unknown unit \" s\""},
    row{"1h30m", "unknown unit \"h30m\""},
    row{"1e3s", "unknown unit \"e3s\""},
    row{"s", "expected a number with a unit"},
    row{" 5s", "expected a number with a unit"},
    row{"+5s", "expected a number with a unit"},
    row{".5s", "expected a number with a unit"},
    row{"1.s", "expected digits after the decimal point"},
    row{"2562048h", "too large"},
    row{"99999999999999999999ns", "too large"},
    row{"0.5ns", "finer than 1ns"},
  }));
  INFO(text);
  auto parsed = parse_duration(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().code == code_of(errc::bad_config_value));
  CHECK_THAT(parsed.error().message,
             Catch::Contains(fmt::format("bad duration \"{}\"", text)));
  CHECK_THAT(parsed.error().message, Catch::Contains(why));
}

TEST_CASE("render_duration: the largest unit that keeps the value whole") {
  using row = std::tuple<timespan, std::string>;
  auto [value, text] = GENERATE(table<timespan, std::string>({
    row{0ns, "0s"},
    row{1ns, "1ns"},
    row{1500ns, "1500ns"},
    row{1us, "1us"},
    row{2ms, "2ms"},
    row{1500ms, "1500ms"},
    row{20s, "20s"},
    row{3601s, "3601s"},
    row{61min, "61m"},
    row{2h, "2h"},
    row{-5s, "-5s"},
  }));
  CHECK(render_duration(value) == text);
}

// -- names --------------------------------------------------------------------

TEST_CASE("env_name_of: TROUPE_ + key upper-cased with . as __") {
  using row = std::tuple<std::string, std::string>;
  auto [key, env] = GENERATE(table<std::string, std::string>({
    row{"lease.ttl", "TROUPE_LEASE__TTL"},
    row{"cluster.seed_nodes", "TROUPE_CLUSTER__SEED_NODES"},
    row{"a.b2.c_d", "TROUPE_A__B2__C_D"},
    row{"port", "TROUPE_PORT"},
  }));
  CHECK(env_name_of(key) == env);
}

TEST_CASE("to_string(config_type): the type's name") {
  using row = std::tuple<config_type, std::string>;
  auto [type, name] = GENERATE(table<config_type, std::string>({
    row{config_type::string, "string"},
    row{config_type::integer, "integer"},
    row{config_type::boolean, "boolean"},
    row{config_type::real, "real"},
    row{config_type::duration, "duration"},
    row{config_type::string_list, "string_list"},
    row{config_type::secret, "secret"},
  }));
  CHECK(to_string(type) == name);
}

TEST_CASE("config_schema: closest suggests a key within edit distance 2") {
  using row = std::tuple<std::string, std::string>;
  auto [typo, hint] = GENERATE(table<std::string, std::string>({
    row{"lease.ttl", "lease.ttl"},
    row{"lease.tll", "lease.ttl"}, // swap of neighbours
    row{"lease.t", "lease.ttl"},   // two deletions
    row{"app.workrs", "app.workers"},
    row{"ap.worker", "app.workers"},
    row{"lease", ""},
    row{"lease.xyz", ""},
    row{"nothing.like_it", ""},
  }));
  auto* key = test_schema().closest(typo);
  CHECK((key != nullptr ? key->name : std::string{}) == hint);
}

TEST_CASE("config_schema: keys are sorted by name") {
  strings names;
  for (auto* key : test_schema().keys())
    names.push_back(key->name);
  CHECK(names
        == strings{"app.debug", "app.mode", "app.name", "app.ratio",
                   "app.workers", "cluster.seed_nodes", "db.password",
                   "lease.ttl"});
  CHECK(test_schema().find("lease.ttl") != nullptr);
  CHECK(test_schema().find("lease") == nullptr);
}

// -- values -------------------------------------------------------------------

TEST_CASE("config: defaults come from the schema, with origin default") {
  config cfg{test_schema()};
  CHECK(cfg.get<std::string>("app.name") == "demo");
  CHECK(cfg.get<int64_t>("app.workers") == 4);
  CHECK(cfg.get<bool>("app.debug") == false);
  CHECK(cfg.get<double>("app.ratio") == 0.5);
  CHECK(cfg.get<timespan>("lease.ttl") == 15s);
  CHECK(cfg.get<strings>("cluster.seed_nodes").empty());
  CHECK(cfg.get<secret>("db.password").reveal() == "default-s3cret");
  for (auto* key : test_schema().keys())
    CHECK(cfg.origin(key->name).text == "default");
}

TEST_CASE("config: text of every type parses and renders") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [key, text, rendered]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"app.name", "hello world", "hello world"},
      row{"app.name", "", ""},
      row{"app.mode", "fast", "fast"},
      row{"app.workers", "1", "1"},
      row{"app.workers", "64", "64"},
      row{"app.workers", "007", "7"},
      row{"app.debug", "true", "true"},
      row{"app.debug", "1", "true"},
      row{"app.debug", "yes", "true"},
      row{"app.debug", "on", "true"},
      row{"app.debug", "TRUE", "true"},
      row{"app.debug", "false", "false"},
      row{"app.debug", "0", "false"},
      row{"app.debug", "no", "false"},
      row{"app.debug", "off", "false"},
      row{"app.ratio", "0.25", "0.25"},
      row{"app.ratio", "-3", "-3"},
      row{"app.ratio", "1e3", "1000"},
      row{"lease.ttl", "1.5s", "1500ms"},
      row{"lease.ttl", "1ns", "1ns"},
      row{"cluster.seed_nodes", "a:1, b:2 ,c:3", "a:1,b:2,c:3"},
      row{"cluster.seed_nodes", "solo", "solo"},
      row{"cluster.seed_nodes", "", ""},
      row{"cluster.seed_nodes", "  ", ""},
      row{"db.password", "hunter2", "<redacted>"},
    }));
  INFO(key << " = " << text);
  config cfg{test_schema()};
  auto err = cfg.set(key, text, config_origin{"set by code"});
  CHECK(err.message == "");
  CHECK(cfg.render(key) == rendered);
  CHECK(cfg.origin(key).text == "set by code");
}

TEST_CASE("config: get returns the typed value that was set") {
  config cfg{test_schema()};
  config_origin origin{"set by code"};
  REQUIRE_FALSE(cfg.set("app.workers", "17", origin));
  REQUIRE_FALSE(cfg.set("app.debug", "on", origin));
  REQUIRE_FALSE(cfg.set("app.ratio", "0.125", origin));
  REQUIRE_FALSE(cfg.set("lease.ttl", "2.5s", origin));
  REQUIRE_FALSE(cfg.set("cluster.seed_nodes", " a , b ", origin));
  REQUIRE_FALSE(cfg.set("db.password", "hunter2", origin));
  CHECK(cfg.get<int64_t>("app.workers") == 17);
  CHECK(cfg.get<bool>("app.debug"));
  CHECK(cfg.get<double>("app.ratio") == 0.125);
  CHECK(cfg.get<timespan>("lease.ttl") == 2500ms);
  CHECK(cfg.get<strings>("cluster.seed_nodes") == strings{"a", "b"});
  CHECK(cfg.get<secret>("db.password").reveal() == "hunter2");
}

TEST_CASE("config: bad text names the key, the value, the origin and why") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [key, text, why]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"app.workers", "0", "must be at least 1"},
      row{"app.workers", "65", "must be at most 64"},
      row{"app.workers", "-1", "must be at least 1"},
      row{"app.workers", "4.5", "expected a decimal integer"},
      row{"app.workers", "+4", "expected a decimal integer"},
      row{"app.workers", "", "expected a decimal integer"},
      row{"app.workers", "99999999999999999999",
          "out of the range of a 64-bit integer"},
      row{"app.debug", "maybe",
          "expected true or false (also 1/0, yes/no, "
          "on/off)"},
      row{"app.debug", "", "expected true or false (also 1/0, yes/no, on/off)"},
      row{"app.ratio", "abc", "expected a number"},
      row{"app.ratio", "1.5x", "expected a number"},
      row{"app.ratio", "inf", "expected a finite number"},
      row{"lease.ttl", "0s", "must be at least 1ns"},
      row{"lease.ttl", "5x",
          "unknown unit \"x\" (expected ns, us, ms, s, m, "
          "h)"},
      row{"lease.ttl", "15", "missing unit (expected ns, us, ms, s, m, h)"},
      row{"lease.ttl", "-1s", "negative durations are not allowed"},
      row{"app.mode", "turbo", "must be one of: fast, safe"},
      row{"cluster.seed_nodes", "a,,b", "item 2 of the list is empty"},
      row{"cluster.seed_nodes", "a,", "item 2 of the list is empty"},
    }));
  INFO(key << " = " << text);
  config cfg{test_schema()};
  auto before = cfg.render(key);
  auto err = cfg.set(key, text, config_origin{"env X"});
  CHECK(err.category == "runtime");
  CHECK(err.code == code_of(errc::bad_config_value));
  CHECK(
    err.message
    == fmt::format("bad value \"{}\" for {} (from env X): {}", text, key, why));
  CHECK(cfg.render(key) == before); // a bad value changes nothing
  CHECK(cfg.origin(key).text == "default");
}

TEST_CASE("config: file values are type-checked against the schema") {
  using row = std::tuple<std::string, raw_config_value, std::string>;
  auto [key, raw, rendered]
    = GENERATE(table<std::string, raw_config_value, std::string>({
      row{"app.workers", int64_t{8}, "8"},
      row{"app.ratio", int64_t{2}, "2"},
      row{"app.ratio", 0.75, "0.75"},
      row{"app.debug", true, "true"},
      row{"app.name", std::string{"x"}, "x"},
      row{"lease.ttl", std::string{"20s"}, "20s"},
      row{"cluster.seed_nodes", strings{"a", "b"}, "a,b"},
      row{"cluster.seed_nodes", strings{}, ""},
      row{"cluster.seed_nodes", std::string{"a, b"}, "a,b"},
      row{"db.password", std::string{"pw"}, "<redacted>"},
    }));
  INFO(key << " = " << rendered);
  config cfg{test_schema()};
  auto err = cfg.set(key, raw, config_origin{"file f.toml"});
  CHECK(err.message == "");
  CHECK(cfg.render(key) == rendered);
  CHECK(cfg.origin(key).text == "file f.toml");
}

TEST_CASE("config: a file value of the wrong type names key, value, why") {
  using row = std::tuple<std::string, raw_config_value, std::string>;
  auto [key, raw, expected_message]
    = GENERATE(table<std::string, raw_config_value, std::string>({
      row{"lease.ttl", int64_t{20},
          "bad value 20 for lease.ttl (from file f.toml): expected a string "
          "with a unit, e.g. \"20s\", got an integer"},
      row{"app.workers", std::string{"8"},
          "bad value \"8\" for app.workers (from file f.toml): expected an "
          "integer, got a string"},
      row{"app.workers", int64_t{100},
          "bad value 100 for app.workers (from file f.toml): must be at most "
          "64"},
      row{"app.workers", 1.5,
          "bad value 1.5 for app.workers (from file f.toml): expected an "
          "integer, got a real number"},
      row{"app.debug", std::string{"true"},
          "bad value \"true\" for app.debug (from file f.toml): expected true "
          "or false, got a string"},
      row{"app.name", int64_t{1},
          "bad value 1 for app.name (from file f.toml): expected a string, "
          "got an integer"},
      row{"cluster.seed_nodes", true,
          "bad value true for cluster.seed_nodes (from file f.toml): expected "
          "an array of strings or a comma-separated string, got a boolean"},
      row{"cluster.seed_nodes", strings{"a", ""},
          "bad value [\"a\", \"\"] for cluster.seed_nodes (from file f.toml): "
          "item 2 of the list is empty"},
    }));
  config cfg{test_schema()};
  auto err = cfg.set(key, raw, config_origin{"file f.toml"});
  CHECK(err.code == code_of(errc::bad_config_value));
  CHECK(err.message == expected_message);
  CHECK(cfg.origin(key).text == "default");
}

// -- loading ------------------------------------------------------------------

TEST_CASE("load_config: default < file < env < flag, origin names the layer") {
  using row = std::tuple<bool, bool, bool, std::string, std::string>;
  auto [in_file, in_env, in_flag, value, origin]
    = GENERATE(table<bool, bool, bool, std::string, std::string>({
      row{false, false, false, "15s", "default"},
      row{true, false, false, "10s", "file {path}"},
      row{false, true, false, "20s", "env TROUPE_LEASE__TTL"},
      row{false, false, true, "30s", "flag --lease.ttl"},
      row{true, true, false, "20s", "env TROUPE_LEASE__TTL"},
      row{true, false, true, "30s", "flag --lease.ttl"},
      row{false, true, true, "30s", "flag --lease.ttl"},
      row{true, true, true, "30s", "flag --lease.ttl"},
    }));
  INFO("file " << in_file << ", env " << in_env << ", flag " << in_flag);
  // Every layer also sets a key of its own, which the others leave alone.
  temp_file file{in_file ? "app.name = \"from-file\"\n[lease]\nttl = \"10s\"\n"
                         : "app.name = \"from-file\"\n"};
  config_sources src;
  src.file = file.path();
  src.env = {{"TROUPE_APP__WORKERS", "9"}, {"HOME", "/root"}};
  if (in_env)
    src.env.emplace_back("TROUPE_LEASE__TTL", "20s");
  src.args = {"--app.debug=yes"};
  if (in_flag)
    src.args.emplace_back("--lease.ttl=30s");
  auto cfg = load_config(test_schema(), src);
  REQUIRE(cfg);
  CHECK(cfg->render("lease.ttl") == value);
  CHECK(cfg->origin("lease.ttl").text == with_path(origin, file.path()));
  CHECK(cfg->render("app.name") == "from-file");
  CHECK(cfg->origin("app.name").text == "file " + file.path());
  CHECK(cfg->get<int64_t>("app.workers") == 9);
  CHECK(cfg->origin("app.workers").text == "env TROUPE_APP__WORKERS");
  CHECK(cfg->get<bool>("app.debug"));
  CHECK(cfg->origin("app.debug").text == "flag --app.debug");
  CHECK(cfg->origin("app.ratio").text == "default");
}

TEST_CASE("load_config: an unknown key names key and origin, suggests one") {
  using row = std::tuple<source, std::string, std::string>;
  auto [kind, input, message]
    = GENERATE(table<source, std::string, std::string>({
      row{source::file, "[lease]\ntll = \"5s\"\n",
          "unknown key \"lease.tll\" (from file {path}); did you mean "
          "lease.ttl?"},
      row{source::file, "[leas]\nttl = \"5s\"\n",
          "unknown key \"leas.ttl\" (from file {path}); did you mean "
          "lease.ttl?"},
      row{source::file, "colour = \"red\"\n",
          "unknown key \"colour\" (from file {path})"},
      row{source::file, "app = 1\n",
          "unknown key \"app\" (from file {path}); app is a group of keys "
          "such as app.debug"},
      row{source::env, "TROUPE_LEASE__TLL=5s",
          "unknown key \"lease.tll\" (from env TROUPE_LEASE__TLL); did you "
          "mean lease.ttl?"},
      row{source::env, "TROUPE_NOTHING__LIKE_IT=1",
          "unknown key \"nothing.like_it\" (from env TROUPE_NOTHING__LIKE_IT)"},
      row{source::flag, "--lease.tll=5s",
          "unknown key \"lease.tll\" (from flag --lease.tll); did you mean "
          "lease.ttl?"},
      row{source::flag, "--app.workerz=3",
          "unknown key \"app.workerz\" (from flag --app.workerz); did you "
          "mean app.workers?"},
      row{source::flag, "--colour=red",
          "unknown key \"colour\" (from flag --colour)"},
    }));
  INFO(input);
  auto [cfg, path] = load_one(kind, input);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::unknown_config_key));
  CHECK(cfg.error().message == with_path(message, path));
}

TEST_CASE("load_config: a bad value names key, value and origin") {
  using row = std::tuple<source, std::string, std::string>;
  auto [kind, input, message]
    = GENERATE(table<source, std::string, std::string>({
      row{source::env, "TROUPE_LEASE__TTL=5x",
          "bad value \"5x\" for lease.ttl (from env TROUPE_LEASE__TTL): "
          "unknown unit \"x\" (expected ns, us, ms, s, m, h)"},
      row{source::flag, "--app.workers=100",
          "bad value \"100\" for app.workers (from flag --app.workers): must "
          "be at most 64"},
      row{source::flag, "--app.debug=maybe",
          "bad value \"maybe\" for app.debug (from flag --app.debug): "
          "expected true or false (also 1/0, yes/no, on/off)"},
      row{source::file, "[app]\nworkers = 0\n",
          "bad value 0 for app.workers (from file {path}): must be at least "
          "1"},
      row{source::file, "[lease]\nttl = 20\n",
          "bad value 20 for lease.ttl (from file {path}): expected a string "
          "with a unit, e.g. \"20s\", got an integer"},
      row{source::file, "app.mode = \"turbo\"\n",
          "bad value \"turbo\" for app.mode (from file {path}): must be one "
          "of: fast, safe"},
      row{source::file, "cluster.seed_nodes = [\"a\", 1]\n",
          "bad value [\"a\", 1] for cluster.seed_nodes (from file {path}): "
          "TOML arrays must hold only strings"},
      row{source::file, "app.name = 1979-05-27\n",
          "bad value 1979-05-27 for app.name (from file {path}): TOML dates "
          "and times are not supported (use a string)"},
    }));
  INFO(input);
  auto [cfg, path] = load_one(kind, input);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::bad_config_value));
  CHECK(cfg.error().message == with_path(message, path));
}

TEST_CASE("load_config: lists are comma-separated text or TOML arrays") {
  using row = std::tuple<source, std::string, strings>;
  auto [kind, input, items] = GENERATE(table<source, std::string, strings>({
    row{source::env, "TROUPE_CLUSTER__SEED_NODES=a:1, b:2", {"a:1", "b:2"}},
    row{source::env, "TROUPE_CLUSTER__SEED_NODES=a:1", {"a:1"}},
    row{source::env, "TROUPE_CLUSTER__SEED_NODES=", {}},
    row{source::flag, "--cluster.seed_nodes=x,y,z", {"x", "y", "z"}},
    row{source::file,
        "[cluster]\nseed_nodes = [\"a:1\", \"b:2\"]\n",
        {"a:1", "b:2"}},
    row{source::file, "cluster.seed_nodes = []\n", {}},
    row{source::file, "cluster.seed_nodes = \"a:1, b:2\"\n", {"a:1", "b:2"}},
    row{source::file, "cluster = { seed_nodes = [\" a \"] }\n", {" a "}},
  }));
  INFO(input);
  auto [cfg, path] = load_one(kind, input);
  REQUIRE(cfg);
  CHECK(cfg->get<strings>("cluster.seed_nodes") == items);
  CHECK(cfg->origin("cluster.seed_nodes").text != "default");
}

TEST_CASE("load_config: a TOML syntax error names the file and the line") {
  using row = std::tuple<std::string, std::string>;
  auto [content, where] = GENERATE(table<std::string, std::string>({
    row{"app.name = \"x\"\n[lease]\nttl = \n", "line 3: "},
    row{"app.name = \"unterminated\n", "line 1: "},
    row{"[app]\nname = \"a\"\n\n[app]\n", "line 4: "},
    row{"app.name = \"a\"\napp.name = \"b\"\n", "line 2: "},
  }));
  INFO(content);
  temp_file file{content};
  config_sources src;
  src.file = file.path();
  auto cfg = load_config(test_schema(), src);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::bad_config_file));
  CHECK_THAT(cfg.error().message,
             Catch::StartsWith(
               fmt::format("bad config file \"{}\": {}", file.path(), where)));
  CHECK_THAT(cfg.error().message, Catch::Contains("toml::"));
  CHECK(cfg.error().message.find('\n') == std::string::npos);
}

TEST_CASE("load_config: a file that cannot be read names the path") {
  enum class via { sources_file, env, flag };
  using row = std::tuple<via, std::string, std::string>;
  auto [how, path, why] = GENERATE(table<via, std::string, std::string>({
    row{via::sources_file, "/tmp/troupe-config-test-missing.toml",
        "no such file"},
    row{via::env, "/tmp/troupe-config-test-missing.toml", "no such file"},
    row{via::flag, "/tmp/troupe-config-test-missing.toml", "no such file"},
    row{via::flag, "/tmp", "is a directory"},
  }));
  INFO(path);
  config_sources src;
  if (how == via::sources_file)
    src.file = path;
  else if (how == via::env)
    src.env.emplace_back("TROUPE_CONFIG", path);
  else
    src.args.push_back("--config=" + path);
  auto cfg = load_config(test_schema(), src);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::bad_config_file));
  CHECK(cfg.error().message
        == fmt::format("bad config file \"{}\": {}", path, why));
}

TEST_CASE("load_config: the file is --config, else TROUPE_CONFIG, else file") {
  using row = std::tuple<bool, bool, bool, std::string>;
  auto [in_sources, in_env, in_flag, name]
    = GENERATE(table<bool, bool, bool, std::string>({
      row{false, false, false, "demo"},
      row{true, false, false, "a"},
      row{true, true, false, "b"},
      row{true, true, true, "c"},
      row{false, false, true, "c"},
      row{false, true, false, "b"},
    }));
  temp_file a{"app.name = \"a\"\n"};
  temp_file b{"app.name = \"b\"\n"};
  temp_file c{"app.name = \"c\"\n"};
  config_sources src;
  if (in_sources)
    src.file = a.path();
  if (in_env)
    src.env.emplace_back("TROUPE_CONFIG", b.path());
  if (in_flag)
    src.args.push_back("--config=" + c.path());
  auto cfg = load_config(test_schema(), src); // TROUPE_CONFIG is not a key
  REQUIRE(cfg);
  CHECK(cfg->render("app.name") == name);
}

TEST_CASE("load_config: arguments must be --key=value") {
  using row = std::tuple<std::string, std::string>;
  auto [arg, message] = GENERATE(table<std::string, std::string>({
    row{"lease.ttl=5s", "bad command-line argument \"lease.ttl=5s\": "
                        "expected --key=value"},
    row{"--lease.ttl", "bad command-line argument \"--lease.ttl\": expected "
                       "--key=value"},
    row{"-v", "bad command-line argument \"-v\": expected --key=value"},
    row{"--=5", "bad command-line argument \"--=5\": expected --key=value"},
    row{"--config", "bad command-line argument \"--config\": expected "
                    "--key=value"},
    row{"--config=", "bad command-line argument \"--config=\": expected "
                     "--config=PATH"},
  }));
  auto [cfg, path] = load_one(source::flag, arg);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::bad_command_line));
  CHECK(cfg.error().message == message);
}

TEST_CASE("load_config: every problem is reported, each on its own line") {
  temp_file file{"colour = \"red\"\n[app]\nworkers = 0\n"};
  config_sources src;
  src.file = file.path();
  src.env = {{"TROUPE_LEASE__TTL", "5x"}, {"TROUPE_LEASE__TLL", "5s"}};
  src.args = {"--app.debug=maybe", "stray", "--app.name=ok"};
  auto cfg = load_config(test_schema(), src);
  REQUIRE_FALSE(cfg);
  // The first problem's code; the file's lines in file order, then env,
  // then the command line.
  CHECK(cfg.error().code == code_of(errc::unknown_config_key));
  auto origin = "(from file " + file.path() + ")";
  CHECK(cfg.error().message
        == "6 configuration errors:\n"
           "  unknown key \"colour\" "
             + origin
             + "\n"
               "  bad value 0 for app.workers "
             + origin
             + ": must be at least 1\n"
               "  bad value \"5x\" for lease.ttl (from env "
               "TROUPE_LEASE__TTL): unknown unit \"x\" (expected ns, us, ms, "
               "s, m, h)\n"
               "  unknown key \"lease.tll\" (from env TROUPE_LEASE__TLL); did "
               "you mean lease.ttl?\n"
               "  bad value \"maybe\" for app.debug (from flag --app.debug): "
               "expected true or false (also 1/0, yes/no, on/off)\n"
               "  bad command-line argument \"stray\": expected --key=value");
}

TEST_CASE("load_config: a file error does not hide env and flag errors") {
  config_sources src;
  src.file = "/tmp/troupe-config-test-missing.toml";
  src.env = {{"TROUPE_APP__WORKERS", "zero"}};
  src.args = {"--lease.ttl=1"};
  auto cfg = load_config(test_schema(), src);
  REQUIRE_FALSE(cfg);
  CHECK(cfg.error().code == code_of(errc::bad_config_file));
  CHECK_THAT(cfg.error().message, Catch::StartsWith("3 configuration errors:"));
  CHECK_THAT(cfg.error().message, Catch::Contains("no such file"));
  CHECK_THAT(cfg.error().message, Catch::Contains("TROUPE_APP__WORKERS"));
  CHECK_THAT(cfg.error().message, Catch::Contains("flag --lease.ttl"));
}

// -- secrets ------------------------------------------------------------------

TEST_CASE("secrets: set from every layer, rendered as <redacted>") {
  using row = std::tuple<source, std::string, std::string>;
  auto [kind, input, origin]
    = GENERATE(table<source, std::string, std::string>({
      row{source::file, "[db]\npassword = \"hunter2\"\n", "file {path}"},
      row{source::env, "TROUPE_DB__PASSWORD=hunter2",
          "env TROUPE_DB__PASSWORD"},
      row{source::flag, "--db.password=hunter2", "flag --db.password"},
    }));
  auto [cfg, path] = load_one(kind, input);
  REQUIRE(cfg);
  CHECK(cfg->get<secret>("db.password").reveal() == "hunter2");
  CHECK(cfg->render("db.password") == "<redacted>");
  CHECK(cfg->origin("db.password").text == with_path(origin, path));
  CHECK(fmt::format("{}", cfg->get<secret>("db.password")) == "<redacted>");
}

TEST_CASE("secrets: no error and no documentation shows a secret value") {
  using row = std::tuple<source, std::string, std::string>;
  auto [kind, input, value] = GENERATE(table<source, std::string, std::string>({
    row{source::file, "db.password = 123456\n", "123456"},
    row{source::file, "db.password = [\"hunter2\"]\n", "hunter2"},
    row{source::file, "db.password = [\"hunter2\", 1]\n", "hunter2"},
    row{source::file, "db.password = 1979-05-27\n", "1979"},
    row{source::flag, "-db.password=hunter2", "hunter2"},
    row{source::flag, "db.password=hunter2", "hunter2"},
  }));
  INFO(input);
  auto [cfg, path] = load_one(kind, input);
  REQUIRE_FALSE(cfg);
  CHECK_THAT(cfg.error().message, Catch::Contains("db.password"));
  CHECK_THAT(cfg.error().message, !Catch::Contains(value));
  CHECK_THAT(render_markdown(test_schema()),
             !Catch::Contains("default-s3cret"));
}

// -- sources ------------------------------------------------------------------

TEST_CASE("sources_from_process: keeps TROUPE_* variables and every "
          "argument before a bare --") {
  using row = std::tuple<strings, strings, std::string, strings, strings>;
  auto [argv, envp, file, args, env]
    = GENERATE(table<strings, strings, std::string, strings, strings>({
      row{{"prog"}, {"HOME=/root"}, "", {}, {}},
      row{{"prog", "--lease.ttl=5s", "positional", "-v", "--x"},
          {"PATH=/bin", "TROUPE_LEASE__TTL=1s", "MY_TROUPE_X=1"},
          "",
          {"--lease.ttl=5s", "positional", "-v", "--x"},
          {"TROUPE_LEASE__TTL=1s"}},
      row{{"prog", "--config=/etc/t.toml", "--", "--after=1"},
          {"TROUPE_CONFIG=/x.toml", "TROUPE_A=b=c"},
          "/etc/t.toml",
          {"--config=/etc/t.toml"},
          {"TROUPE_CONFIG=/x.toml", "TROUPE_A=b=c"}},
      row{{"prog"},
          {"TROUPE_CONFIG=/x.toml"},
          "/x.toml",
          {},
          {"TROUPE_CONFIG=/x.toml"}},
      row{{"prog"}, {"TROUPE_CONFIG="}, "", {}, {"TROUPE_CONFIG="}},
    }));
  std::vector<char*> argv_ptrs;
  for (auto& x : argv)
    argv_ptrs.push_back(x.data());
  argv_ptrs.push_back(nullptr);
  std::vector<char*> envp_ptrs;
  for (auto& x : envp)
    envp_ptrs.push_back(x.data());
  envp_ptrs.push_back(nullptr);
  auto from_argv = sources_from_process(static_cast<int>(argv.size()),
                                        argv_ptrs.data(), envp_ptrs.data());
  auto from_vector = sources_from_process(strings{argv.begin() + 1, argv.end()},
                                          envp_ptrs.data());
  for (const auto* src : {&from_argv, &from_vector}) {
    CHECK(src->file.value_or("") == file);
    CHECK(src->args == args);
    strings env_entries;
    for (const auto& [name, value] : src->env)
      env_entries.push_back(name + "=" + value);
    CHECK(env_entries == env);
  }
}

// -- documentation ------------------------------------------------------------

TEST_CASE("render_markdown: one row per key, sorted, with every column") {
  auto doc = render_markdown(test_schema());
  CHECK_THAT(doc, Catch::StartsWith("| key | type | default | env variable | "
                                    "description |\n|---"));
  using row = std::tuple<std::string>;
  auto [line] = GENERATE(table<std::string>({
    row{"| `app.debug` | boolean | `false` | `TROUPE_APP__DEBUG` | Debug "
        "mode. |"},
    row{"| `app.mode` | string (one of: fast, safe) | `safe` | "
        "`TROUPE_APP__MODE` | How to run \\| fast or safe. |"},
    row{"| `app.name` | string | `demo` | `TROUPE_APP__NAME` | The "
        "application's name. |"},
    row{"| `app.ratio` | real | `0.5` | `TROUPE_APP__RATIO` | A ratio. |"},
    row{"| `app.workers` | integer (1 to 64) | `4` | `TROUPE_APP__WORKERS` | "
        "Worker threads. |"},
    row{"| `cluster.seed_nodes` | string_list | (empty) | "
        "`TROUPE_CLUSTER__SEED_NODES` | Seed nodes as host:port. |"},
    row{"| `db.password` | secret | (secret) | `TROUPE_DB__PASSWORD` | The "
        "database password. |"},
    row{"| `lease.ttl` | duration (at least 1ns) | `15s` | "
        "`TROUPE_LEASE__TTL` | Lease time to live. |"},
  }));
  CHECK_THAT(doc, Catch::Contains(line + "\n"));
  // Sorted: every key's row comes after the rows of the keys before it.
  size_t last = 0;
  for (auto* key : test_schema().keys()) {
    auto pos = doc.find(fmt::format("| `{}` |", key->name));
    REQUIRE(pos != std::string::npos);
    CHECK(pos > last);
    last = pos;
  }
  CHECK(std::count(doc.begin(), doc.end(), '\n')
        == static_cast<long>(test_schema().keys().size() + 2));
}

TEST_CASE("load_config: a stray argument is an error, never ignored") {
  config_schema schema;
  schema.add(make_config_key("lease.ttl", config_type::duration, "15s", "x"));
  for (std::string arg : {"lease.ttl=5x", "-lease.ttl=5s", "positional"}) {
    auto cfg = load_config(schema, make_config_sources({arg}, {}));
    REQUIRE_FALSE(cfg);
    CHECK_THAT(cfg.error().message, Catch::Contains(arg));
    CHECK_THAT(cfg.error().message, Catch::Contains("expected --key=value"));
  }
}

TEST_CASE("load_config: deeply nested TOML is refused before parsing") {
  config_schema schema;
  schema.add(make_config_key("a.b", config_type::string, "", "x"));
  char path[] = "/tmp/troupe-nested-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::string text
    = "a = " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  REQUIRE(write(fd, text.data(), text.size())
          == static_cast<ssize_t>(text.size()));
  close(fd);
  auto cfg = load_config(
    schema, make_config_sources({"--config=" + std::string{path}}, {}));
  std::remove(path);
  REQUIRE_FALSE(cfg);
  CHECK_THAT(cfg.error().message, Catch::Contains("nested 10000 deep"));
}

TEST_CASE("load_config: the error list is capped") {
  config_schema schema;
  schema.add(make_config_key("a.b", config_type::string, "", "x"));
  std::vector<std::string> args;
  for (int i = 0; i < 80; ++i)
    args.push_back("--unknown" + std::to_string(i) + "=1");
  auto cfg = load_config(schema, make_config_sources(args, {}));
  REQUIRE_FALSE(cfg);
  CHECK_THAT(cfg.error().message, Catch::StartsWith("80 configuration errors"));
  CHECK_THAT(cfg.error().message, Catch::Contains("... and 30 more"));
}

TEST_CASE("secrets: an unset secret renders as (not set), a set one never "
          "shows") {
  config_schema schema;
  schema.add(make_config_key("db.token", config_type::secret, "",
                             "A secret without a default."));
  config cfg{schema};
  CHECK(cfg.render("db.token") == "(not set)");
  REQUIRE_FALSE(cfg.set("db.token", "s3cret", {"test"}));
  CHECK(cfg.render("db.token") == "<redacted>");
}

TEST_CASE("config: a duration key with off_allowed takes off as zero") {
  config_schema schema;
  schema.add({.name = "app.grace",
              .type = config_type::duration,
              .default_value = "off",
              .description = "Grace period or off.",
              .min_duration = 1ms,
              .off_allowed = true});
  schema.add({.name = "app.delay",
              .type = config_type::duration,
              .default_value = "7s",
              .description = "Delay or off.",
              .min_duration = 1ms,
              .off_allowed = true});
  config cfg{schema};
  CHECK(cfg.get<timespan>("app.grace") == 0s);
  CHECK(cfg.render("app.grace") == "off");
  CHECK(cfg.render("app.delay") == "7s");
  config_origin origin{"set by code"};
  REQUIRE_FALSE(cfg.set("app.delay", "off", origin));
  CHECK(cfg.get<timespan>("app.delay") == 0s);
  CHECK(cfg.render("app.delay") == "off");
  REQUIRE_FALSE(cfg.set("app.grace", "250ms", origin));
  CHECK(cfg.get<timespan>("app.grace") == 250ms);
  // A file may also write the TOML boolean false; true means nothing.
  REQUIRE_FALSE(cfg.set("app.grace", raw_config_value{false}, origin));
  CHECK(cfg.render("app.grace") == "off");
  auto err = cfg.set("app.grace", raw_config_value{true}, origin);
  CHECK(err.message
        == "bad value true for app.grace (from set by code): expected a "
           "string with a unit, e.g. \"20s\", or \"off\", got a boolean");
  // "0s" is not a second spelling of off: the lower bound applies.
  err = cfg.set("app.grace", "0s", origin);
  CHECK(err.message
        == "bad value \"0s\" for app.grace (from set by code): must be at "
           "least 1ms");
  CHECK_THAT(render_markdown(schema),
             Catch::Contains("| `app.grace` | duration or off (at least 1ms) "
                             "| `off` |"));
}

TEST_CASE("config_schema: check_on_join marks a key, the configuration "
          "gives the marked keys' values as rendered, and the reference "
          "says so") {
  config_schema schema;
  schema.add({.name = "app.shards",
              .type = config_type::integer,
              .default_value = "1000",
              .description = "Shards."});
  schema.add({.name = "app.grace",
              .type = config_type::duration,
              .default_value = "1500ms",
              .description = "Grace."});
  schema.add(
    {.name = "app.name", .default_value = "demo", .description = "Name."});
  CHECK(config{schema}.join_checked_values().empty());
  schema.check_on_join("app.shards");
  schema.check_on_join("app.grace");
  CHECK(schema.find("app.shards")->checked_on_join);
  CHECK(schema.find("app.grace")->checked_on_join);
  CHECK_FALSE(schema.find("app.name")->checked_on_join);
  config cfg{schema};
  using values = std::map<std::string, std::string>;
  CHECK(cfg.join_checked_values()
        == values{{"app.grace", "1500ms"}, {"app.shards", "1000"}});
  REQUIRE_FALSE(cfg.set("app.shards", "100", config_origin{"flag"}));
  REQUIRE_FALSE(cfg.set("app.grace", "2s", config_origin{"flag"}));
  CHECK(cfg.join_checked_values()
        == values{{"app.grace", "2s"}, {"app.shards", "100"}});
  auto doc = render_markdown(schema);
  CHECK_THAT(doc, Catch::Contains("| Shards. Checked at join: must be equal "
                                  "on every node. |"));
  CHECK_THAT(doc, Catch::Contains("| Name. |"));
}
