// The one Catch2 main of every test binary, in its own translation unit:
// compiling Catch2's runner takes ~20 s, so it is built once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
