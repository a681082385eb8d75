# Warning flags shared by every tokenfeed target (not by third-party code).
add_library(tokenfeed_warnings INTERFACE)
add_library(tokenfeed::warnings ALIAS tokenfeed_warnings)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(tokenfeed_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
endif()
# Shadowed locals: gcc's -Wshadow=local; clang spells it differently.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(tokenfeed_warnings INTERFACE -Wshadow=local)
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(tokenfeed_warnings INTERFACE -Wshadow-uncaptured-local)
endif()
