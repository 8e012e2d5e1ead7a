// Built without CMake, through troupe.pc (docs/guides/
// using-troupe-as-a-library.md):
//
//   c++ -std=c++20 lease_check.cpp $(pkg-config --cflags --libs troupe)
//
// Prints the version of the troupe headers and library and checks a lease's
// settings as a node would (troupe_lease_core, no actor system): exits 0
// when headers and library are compatible and the check named the empty
// owner.

#include <cstdio>
#include <string>

#include "troupe/lease/lease_settings.hpp"
#include "troupe/version.hpp"

int main() {
  std::printf("troupe headers %s, library %s\n", troupe::version.text,
              troupe::library_version().text);
  if (!troupe::is_compatible(troupe::version, troupe::library_version())) {
    std::fprintf(stderr, "lease_check: headers and library do not match\n");
    return 1;
  }
  troupe::lease::lease_settings settings{.name = "jobs", .owner = ""};
  auto err = troupe::lease::validate(settings.with_defaults());
  std::printf("lease \"jobs\" without an owner: %s\n", err.message.c_str());
  return err.message.find("owner") != std::string::npos ? 0 : 1;
}
