# tokenfeed_add_test(NAME SOURCES a_test.cc ... DEPS lib ... [LABELS l ...])
# Builds one GoogleTest program and registers its cases with CTest.
find_package(GTest REQUIRED)
include(GoogleTest)

function(tokenfeed_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main tokenfeed::warnings)
  target_compile_definitions(${name} PRIVATE
    TOKENFEED_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TOKENFEED_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name}
    WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${ARG_LABELS}")
endfunction()
