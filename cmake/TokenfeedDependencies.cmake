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

# Parquet input (src/text/table_text_column.cc) reads through Apache Arrow's
# C++ Parquet library. Debian bookworm packages no libarrow-dev, so it is
# taken from the pyarrow wheel that python/requirements-dev.txt puts in the
# virtual environment: its headers (pyarrow.get_include()) and its shared
# libarrow/libparquet, built with the C++11 string ABI and linkable by GCC 12
# (checked below by compiling and linking a small reader). AUTO: on when they
# are found and link; ON: an error when not; OFF: without (Parquet inputs are
# then refused with a message saying so). docs/ingest.md says why.
set(TOKENFEED_WITH_PARQUET AUTO CACHE STRING "Read Parquet inputs through pyarrow's Arrow C++ libraries: AUTO, ON or OFF")
set_property(CACHE TOKENFEED_WITH_PARQUET PROPERTY STRINGS AUTO ON OFF)
set(TOKENFEED_PARQUET_FOUND OFF)
if(NOT TOKENFEED_WITH_PARQUET STREQUAL "OFF")
  set(_tf_arrow_python "${Python_EXECUTABLE}")
  if(NOT _tf_arrow_python)
    find_program(_tf_arrow_python NAMES python3 python)
  endif()
  set(_tf_arrow_why "")
  if(_tf_arrow_python)
    execute_process(
      COMMAND "${_tf_arrow_python}" -c
              "import pyarrow; print(pyarrow.get_include()); print(pyarrow.get_library_dirs()[0]); print(pyarrow.__version__)"
      RESULT_VARIABLE _tf_arrow_rc OUTPUT_VARIABLE _tf_arrow_out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_tf_arrow_rc EQUAL 0)
      string(REPLACE "\n" ";" _tf_arrow_out "${_tf_arrow_out}")
      list(GET _tf_arrow_out 0 _tf_arrow_include)
      list(GET _tf_arrow_out 1 _tf_arrow_libdir)
      list(GET _tf_arrow_out 2 _tf_arrow_version)
      # The wheel ships libarrow.so.NNNN without the unversioned link.
      file(GLOB _tf_arrow_lib "${_tf_arrow_libdir}/libarrow.so.[0-9]*")
      file(GLOB _tf_parquet_lib "${_tf_arrow_libdir}/libparquet.so.[0-9]*")
      list(FILTER _tf_arrow_lib INCLUDE REGEX "libarrow\\.so\\.[0-9]+$")
      list(FILTER _tf_parquet_lib INCLUDE REGEX "libparquet\\.so\\.[0-9]+$")
      if(_tf_arrow_lib AND _tf_parquet_lib AND EXISTS "${_tf_arrow_include}/parquet/arrow/reader.h")
        include(CheckCXXSourceCompiles)
        set(CMAKE_REQUIRED_INCLUDES "${_tf_arrow_include}")
        set(CMAKE_REQUIRED_LIBRARIES "${_tf_parquet_lib};${_tf_arrow_lib}")
        set(CMAKE_REQUIRED_QUIET ON)
        check_cxx_source_compiles([[
          #include <arrow/io/file.h>
          #include <parquet/arrow/reader.h>
          #include <parquet/file_reader.h>
          #include <string>
          int main() {
            auto in = arrow::io::ReadableFile::Open(std::string("x.parquet"));
            if (!in.ok()) return static_cast<int>(in.status().ToString().size() % 2);
            auto r = parquet::arrow::FileReader::Make(arrow::default_memory_pool(),
                                                      parquet::ParquetFileReader::Open(*in));
            return r.ok() ? 0 : 1;
          }]] TOKENFEED_ARROW_LINKS)
        unset(CMAKE_REQUIRED_INCLUDES)
        unset(CMAKE_REQUIRED_LIBRARIES)
        unset(CMAKE_REQUIRED_QUIET)
        if(TOKENFEED_ARROW_LINKS)
          set(TOKENFEED_PARQUET_FOUND ON)
        else()
          set(_tf_arrow_why "a program using pyarrow ${_tf_arrow_version}'s C++ libraries did not compile and link "
                            "with this compiler (see CMakeFiles/CMakeConfigureLog.yaml)")
        endif()
      else()
        set(_tf_arrow_why "pyarrow ${_tf_arrow_version} in ${_tf_arrow_libdir} has no libarrow.so.N/libparquet.so.N "
                          "and headers")
      endif()
    else()
      set(_tf_arrow_why "${_tf_arrow_python} cannot import pyarrow (bash scripts/setup.sh installs it into .venv)")
    endif()
  else()
    set(_tf_arrow_why "no Python interpreter to ask for pyarrow")
  endif()
  if(TOKENFEED_PARQUET_FOUND)
    add_library(tokenfeed_arrow_parquet INTERFACE)
    target_include_directories(tokenfeed_arrow_parquet SYSTEM INTERFACE "${_tf_arrow_include}")
    target_link_libraries(tokenfeed_arrow_parquet INTERFACE "${_tf_parquet_lib}" "${_tf_arrow_lib}")
    add_library(tokenfeed::arrow_parquet ALIAS tokenfeed_arrow_parquet)
    # The plugin loads only with this libarrow: its SONAME is Arrow's major *
    # 100 + minor (libarrow.so.2500 for pyarrow 25.0.x). The loader names both
    # in its errors (arrow_plugin_loader.cc).
    get_filename_component(TOKENFEED_ARROW_SONAME "${_tf_arrow_lib}" NAME)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" TOKENFEED_PYARROW_SERIES "${_tf_arrow_version}")
    set(TOKENFEED_PYARROW_SERIES "${TOKENFEED_PYARROW_SERIES}.x")
    message(STATUS "tokenfeed: Parquet input through pyarrow ${_tf_arrow_version}'s Arrow C++ (${_tf_arrow_libdir})")
  elseif(TOKENFEED_WITH_PARQUET STREQUAL "ON")
    message(FATAL_ERROR "tokenfeed: TOKENFEED_WITH_PARQUET=ON but ${_tf_arrow_why}. Run `bash scripts/setup.sh`, "
                        "or configure with -DTOKENFEED_WITH_PARQUET=OFF to build without Parquet input.")
  else()
    message(STATUS "tokenfeed: without Parquet input: ${_tf_arrow_why}")
  endif()
endif()
