# rig_add_test(NAME name SOURCES a.cpp ... LIBRARIES lib ... [LABELS slow ...])
# One GoogleTest executable, its tests discovered into CTest one by one. A test that
# needs hardware it cannot find exits 77, which CTest counts as skipped.
# Label "slow" marks tests that the sanitizer presets leave out (CMakePresets.json).
function(rig_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBRARIES} GTest::gtest GTest::gtest_main GTest::gmock rig_warnings)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  gtest_discover_tests(${T_NAME}
    DISCOVERY_TIMEOUT 60
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
endfunction()
