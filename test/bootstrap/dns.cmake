# The dns discovery method: its config keys and the decoding of DNS answers
# (no server), and the discovery against a real dnsmasq (Debian
# dnsmasq-base) on loopback, started per test case by test/support
# dnsmasq_fixture. In CI a missing dnsmasq fails.
troupe_test(NAME bootstrap_dns_unit_tests LABEL unit
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/dns_answer_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dns_discovery_config_test.cpp
  LINK troupe_bootstrap_edge troupe_test_support)

troupe_test(NAME bootstrap_dns_tests LABEL integration TIMEOUT 120
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/dns_discovery_test.cpp
  LINK troupe_bootstrap_edge troupe_test_support)
