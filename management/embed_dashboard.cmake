# Writes OUT, a C++ file whose troupe::management::dashboard_html() returns
# the bytes of IN (the dashboard page) as a raw string literal.
file(READ "${IN}" page)
string(FIND "${page}" ")troupe_dashboard\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's delimiter")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from management/edge/dashboard.html; do not edit.\n"
  "namespace troupe::management {\n"
  "const char* dashboard_html() noexcept {\n"
  "  return R\"troupe_dashboard(${page})troupe_dashboard\";\n"
  "}\n"
  "} // namespace troupe::management\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
