#include "troupe/runtime/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace troupe::runtime::detail {

void assertion_failed(const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
  std::fflush(stderr);
  std::abort();
}

} // namespace troupe::runtime::detail
