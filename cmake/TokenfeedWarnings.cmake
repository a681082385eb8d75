# Warning flags shared by every tokenfeed target (not by third-party code).
add_library(tokenfeed_warnings INTERFACE)
add_library(tokenfeed::warnings ALIAS tokenfeed_warnings)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(tokenfeed_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow=local -Wno-missing-field-initializers)
endif()
