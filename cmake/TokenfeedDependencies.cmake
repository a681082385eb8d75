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
# (and Unicode version) of the reference tokenizer. Prefer the pinned source
# tree that scripts/fetch-oniguruma.sh unpacks; fall back to the system library.
if(EXISTS "${TOKENFEED_ONIG_SOURCE_DIR}/CMakeLists.txt")
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
  set(TOKENFEED_ONIG_BUNDLED ON)
  message(STATUS "tokenfeed: Oniguruma from ${TOKENFEED_ONIG_SOURCE_DIR}")
else()
  pkg_check_modules(ONIG REQUIRED IMPORTED_TARGET oniguruma)
  add_library(tokenfeed_onig INTERFACE)
  target_link_libraries(tokenfeed_onig INTERFACE PkgConfig::ONIG)
  set(TOKENFEED_ONIG_BUNDLED OFF)
  message(WARNING "tokenfeed: using the system Oniguruma ${ONIG_VERSION}; its Unicode tables may be older than "
                  "the reference tokenizer's. Run scripts/fetch-oniguruma.sh for the pinned version.")
endif()
add_library(tokenfeed::onig ALIAS tokenfeed_onig)

if(TOKENFEED_WITH_KAFKA)
  pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
endif()

if(TOKENFEED_BUILD_CLI)
  find_package(CLI11 CONFIG REQUIRED)
endif()
