# ---- Remote references (remoting) -------------------------------------------
troupe_test(NAME remoting_unit_tests LABEL unit
  SOURCES
    remote_ref_test.cpp
    remoting_wire_test.cpp
    watch_table_test.cpp
  LINK troupe_cluster_core)
