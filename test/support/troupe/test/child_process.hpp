#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include <unistd.h>

#include "troupe/test/child.hpp"

/// @file
/// Child processes (`child`, troupe/test/child.hpp) and scratch directories
/// for multi-process tests.

namespace troupe::test {

namespace fs = std::filesystem;

/// A fresh directory; kept when KEEP_TEST_TMP is set (for post-mortems).
/// (Not TROUPE_*: troupe programs read those as configuration.)
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "troupe-mp-XXXXXX");
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    if (std::getenv("KEEP_TEST_TMP") != nullptr)
      return;
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

} // namespace troupe::test
