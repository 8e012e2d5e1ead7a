# ---- Failure detection, heartbeats, join protocol, membership settings ------
troupe_test(NAME failure_detection_unit_tests LABEL unit
  SOURCES
    heartbeat_ring_test.cpp
    join_config_checker_test.cpp
    join_protocol_test.cpp
    membership_settings_test.cpp
    phi_accrual_detector_test.cpp
  LINK troupe_cluster_core)
