# Finds every third-party library tokenfeed uses and exposes each as an
# imported target. Debian package names are in scripts/install-deps.sh.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(simdjson REQUIRED)
find_package(ZLIB REQUIRED)
find_package(zstd CONFIG QUIET)
if(TARGET zstd::libzstd_shared)
  add_library(tokenfeed_zstd INTERFACE)
  target_link_libraries(tokenfeed_zstd INTERFACE zstd::libzstd_shared)
else()
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  add_library(tokenfeed_zstd INTERFACE)
  target_link_libraries(tokenfeed_zstd INTERFACE PkgConfig::ZSTD)
endif()
add_library(tokenfeed::zstd ALIAS tokenfeed_zstd)

pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)

# Oniguruma runs the general pre-tokenizer regexes with exactly the semantics
# (and Unicode version) of the reference tokenizer: 6.9.10 as the reference
# builds it, from the source tree scripts/fetch-oniguruma.sh unpacks into
# third_party/oniguruma. Another version gives other answers (older Unicode
# tables; 6.9.8 reads a retry limit of 0 differently), so no system library is
# used: a build without the tree fetches it (needs cargo and the crate
# registry), or stops and says what to run.
option(TOKENFEED_FETCH_ONIGURUMA "Run scripts/fetch-oniguruma.sh when third_party/oniguruma is missing" ON)
set(_tf_onig_header "${TOKENFEED_ONIG_SOURCE_DIR}/src/oniguruma.h")
if(NOT EXISTS "${_tf_onig_header}" AND TOKENFEED_FETCH_ONIGURUMA
   AND TOKENFEED_ONIG_SOURCE_DIR STREQUAL "${PROJECT_SOURCE_DIR}/third_party/oniguruma")
  message(STATUS "tokenfeed: fetching the Oniguruma 6.9.10 source (scripts/fetch-oniguruma.sh)")
  execute_process(
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/fetch-oniguruma.sh"
    RESULT_VARIABLE _tf_onig_fetch
    OUTPUT_VARIABLE _tf_onig_fetch_out
    ERROR_VARIABLE _tf_onig_fetch_out)
  if(NOT _tf_onig_fetch EQUAL 0)
    message(FATAL_ERROR "tokenfeed: the Oniguruma 6.9.10 source is missing from ${TOKENFEED_ONIG_SOURCE_DIR} and "
                        "scripts/fetch-oniguruma.sh failed:\n${_tf_onig_fetch_out}\n"
                        "Run `bash scripts/fetch-oniguruma.sh` (it needs cargo: `apt-get install cargo`) and build "
                        "again, or point -DTOKENFEED_ONIG_SOURCE_DIR at an Oniguruma 6.9.10 source tree.")
  endif()
endif()
if(NOT EXISTS "${_tf_onig_header}" OR NOT EXISTS "${TOKENFEED_ONIG_SOURCE_DIR}/CMakeLists.txt")
  message(FATAL_ERROR "tokenfeed: no Oniguruma source tree in ${TOKENFEED_ONIG_SOURCE_DIR}. "
                      "Run `bash scripts/fetch-oniguruma.sh` (needs cargo) and build again; a system Oniguruma "
                      "is not used because other versions tokenize differently from the reference.")
endif()
file(STRINGS "${_tf_onig_header}" _tf_onig_version_lines REGEX "#define ONIGURUMA_VERSION_(MAJOR|MINOR|TEENY) ")
string(REGEX REPLACE ".*MAJOR +([0-9]+).*MINOR +([0-9]+).*TEENY +([0-9]+).*" "\\1.\\2.\\3"
       _tf_onig_version "${_tf_onig_version_lines}")
if(NOT _tf_onig_version STREQUAL "6.9.10")
  message(FATAL_ERROR "tokenfeed: ${TOKENFEED_ONIG_SOURCE_DIR} holds Oniguruma ${_tf_onig_version}, not the 6.9.10 "
                      "the reference tokenizer uses. Remove it and run `bash scripts/fetch-oniguruma.sh`.")
endif()
# tokenfeed links everything statically into its programs and Python module.
set(BUILD_SHARED_LIBS OFF CACHE BOOL "Build shared libraries" FORCE)
set(ENABLE_POSIX_API OFF CACHE BOOL "" FORCE)
set(ENABLE_BINARY_COMPATIBLE_POSIX_API OFF CACHE BOOL "" FORCE)
set(INSTALL_DOCUMENTATION OFF CACHE BOOL "" FORCE)
set(INSTALL_EXAMPLES OFF CACHE BOOL "" FORCE)
add_subdirectory("${TOKENFEED_ONIG_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/third_party/oniguruma" EXCLUDE_FROM_ALL SYSTEM)
set_target_properties(onig PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library(tokenfeed_onig INTERFACE)
target_link_libraries(tokenfeed_onig INTERFACE onig)
message(STATUS "tokenfeed: Oniguruma ${_tf_onig_version} from ${TOKENFEED_ONIG_SOURCE_DIR}")
add_library(tokenfeed::onig ALIAS tokenfeed_onig)

if(TOKENFEED_WITH_KAFKA)
  pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
endif()

if(TOKENFEED_BUILD_CLI)
  find_package(CLI11 CONFIG REQUIRED)
endif()
