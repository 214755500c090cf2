# lib/cache store: layer extraction, the node cache directory and compile-cache compatibility.
add_library(neuron_cache_test_util STATIC ${CMAKE_CURRENT_LIST_DIR}/layer_test_util.cc)
target_include_directories(neuron_cache_test_util PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_features(neuron_cache_test_util PUBLIC cxx_std_20)
target_link_libraries(neuron_cache_test_util PRIVATE LibArchive::LibArchive neuron::warnings)

# Extraction of real archives (hostile ones built with libarchive's writer and GNU tar).
neuron_cc_test(NAME cache_layer_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/layer_path_test.cc ${CMAKE_CURRENT_LIST_DIR}/layer_extractor_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/layer_hostile_test.cc
  DEPS neuron::cache_store neuron_cache_test_util absl::strings LABELS "unit")

# The store on a real directory, and compile-cache scanning on generated trees.
neuron_cc_test(NAME cache_store_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/cache_store_test.cc ${CMAKE_CURRENT_LIST_DIR}/compile_cache_test.cc
  DEPS neuron::cache_store neuron_cache_test_util nlohmann_json::nlohmann_json absl::strings
  LABELS "unit")

# Entry names, compile flags and whole layers from the fuzzer (replayed as a unit test).
neuron_fuzz_target(NAME cache_layer_fuzz SRCS ${PROJECT_SOURCE_DIR}/tests/fuzz/cache_layer_fuzz.cc
  DEPS neuron::cache_store CORPUS ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/cache_layer)
