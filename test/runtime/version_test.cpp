#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/version.hpp"

using troupe::version_info;

// Set by test/runtime/CMakeLists.txt from project(troupe VERSION ...).
#ifndef TROUPE_TEST_PROJECT_VERSION
#  error "TROUPE_TEST_PROJECT_VERSION is not defined"
#endif

static_assert(troupe::compiled_version() == troupe::version);
static_assert(TROUPE_VERSION
              == TROUPE_VERSION_MAJOR * 10000 + TROUPE_VERSION_MINOR * 100
                   + TROUPE_VERSION_PATCH);

TEST_CASE("version: the header is project(VERSION) in every form") {
  CHECK(std::string{TROUPE_VERSION_STRING} == TROUPE_TEST_PROJECT_VERSION);
  CHECK(std::string{troupe::version.text} == TROUPE_TEST_PROJECT_VERSION);
  CHECK(std::to_string(TROUPE_VERSION_MAJOR) + "."
          + std::to_string(TROUPE_VERSION_MINOR) + "."
          + std::to_string(TROUPE_VERSION_PATCH)
        == TROUPE_TEST_PROJECT_VERSION);
  CHECK(troupe::version.major == TROUPE_VERSION_MAJOR);
  CHECK(troupe::version.minor == TROUPE_VERSION_MINOR);
  CHECK(troupe::version.patch == TROUPE_VERSION_PATCH);
}

TEST_CASE("version: library_version is the version the library was built "
          "with") {
  auto linked = troupe::library_version();
  CHECK(linked == troupe::version);
  CHECK(std::string{linked.text} == troupe::version.text);
  CHECK(troupe::is_compatible(troupe::version, linked));
}

TEST_CASE("version: ordered by major, then minor, then patch, text ignored") {
  using row = std::tuple<version_info, version_info>;
  auto [lo, hi] = GENERATE(table<version_info, version_info>({
    row{{0, 1, 0, "0.1.0"}, {0, 1, 1, "0.1.1"}},
    row{{0, 1, 9, "0.1.9"}, {0, 2, 0, "0.2.0"}},
    row{{0, 9, 9, "0.9.9"}, {1, 0, 0, "1.0.0"}},
    row{{1, 10, 0, "1.10.0"}, {2, 0, 0, "2.0.0"}},
  }));
  CHECK(lo < hi);
  CHECK_FALSE(hi < lo);
  CHECK(lo != hi);
  CHECK(version_info{hi.major, hi.minor, hi.patch, "other text"} == hi);
}

TEST_CASE("version: is_compatible follows the API stability policy") {
  using row = std::tuple<version_info, version_info, bool>;
  auto [compiled, linked, ok]
    = GENERATE(table<version_info, version_info, bool>({
      row{{0, 1, 0}, {0, 1, 0}, true},
      row{{0, 1, 0}, {0, 1, 3}, true},  // a newer patch
      row{{0, 1, 3}, {0, 1, 0}, false}, // an older library
      row{{0, 1, 0}, {0, 2, 0}, false}, // before 1.0 a minor may break
      row{{0, 2, 0}, {0, 1, 0}, false},
      row{{1, 2, 0}, {1, 3, 1}, true}, // from 1.0 a minor only adds
      row{{1, 3, 0}, {1, 2, 9}, false},
      row{{1, 0, 0}, {2, 0, 0}, false}, // a major breaks
      row{{2, 0, 0}, {1, 9, 9}, false},
    }));
  CHECK(troupe::is_compatible(compiled, linked) == ok);
}
