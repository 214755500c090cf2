# Small wrappers so that every module, test and binary is declared the same way.

add_library(neuron_warnings INTERFACE)
add_library(neuron::warnings ALIAS neuron_warnings)
target_compile_options(neuron_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-qual -Wundef -Wvla
  -Wimplicit-fallthrough)

# neuron_cc_library(NAME x SRCS ... DEPS ... PRIVATE_DEPS ...) -> target neuron_x, alias neuron::x
function(neuron_cc_library)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(neuron_${A_NAME} STATIC ${A_SRCS})
  add_library(neuron::${A_NAME} ALIAS neuron_${A_NAME})
  target_include_directories(neuron_${A_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_features(neuron_${A_NAME} PUBLIC cxx_std_20)
  target_link_libraries(neuron_${A_NAME} PUBLIC ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS} neuron::warnings)
endfunction()

# neuron_cc_binary(NAME x SRCS ... DEPS ...) -> executable in <build>/bin
function(neuron_cc_binary)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} neuron::warnings)
endfunction()

# neuron_cc_test(NAME x SRCS ... DEPS ... LABELS unit|integration|e2e [TIMEOUT s])
# A Catch2 v2 test binary registered with CTest. Tests run from the build directory.
function(neuron_cc_test)
  cmake_parse_arguments(A "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} Catch2::Catch2WithMain neuron::warnings)
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  add_test(NAME ${A_NAME} COMMAND ${A_NAME})
  set_tests_properties(${A_NAME} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "NEURON_BIN_DIR=${CMAKE_BINARY_DIR}/bin;NEURON_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# neuron_fuzz_target(NAME x SRCS ... DEPS ... CORPUS dir)
# With NEURON_FUZZ=ON (clang) it is a libFuzzer binary, built by the target `fuzz_targets` and
# listed with its seed corpus in <build>/fuzz_targets.txt ("name corpus-dir" per line) for
# scripts/fuzz-run.sh. Otherwise it links a replay driver that runs the seed corpus plus a fixed
# number of deterministic mutations of it, and is registered as a unit test, so every build checks
# the parsers against hostile input.
if(NEURON_FUZZ)
  add_custom_target(fuzz_targets)
  file(WRITE ${CMAKE_BINARY_DIR}/fuzz_targets.txt "")
endif()
function(neuron_fuzz_target)
  cmake_parse_arguments(A "" "NAME;CORPUS" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} neuron::warnings)
  if(NEURON_FUZZ)
    target_compile_options(${A_NAME} PRIVATE -fsanitize=fuzzer)
    target_link_options(${A_NAME} PRIVATE -fsanitize=fuzzer)
    add_dependencies(fuzz_targets ${A_NAME})
    file(APPEND ${CMAKE_BINARY_DIR}/fuzz_targets.txt "${A_NAME} ${A_CORPUS}\n")
  else()
    target_link_libraries(${A_NAME} PRIVATE neuron_fuzz_replay)
    add_test(NAME ${A_NAME} COMMAND ${A_NAME} ${A_CORPUS})
    set_tests_properties(${A_NAME} PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)
  endif()
endfunction()
