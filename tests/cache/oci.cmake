# tests/cache/oci.cmake (and the cache test helpers: a local registry, generated compile
# caches, the kubelet's CSI calls): image references, manifests, credentials (unit), the registry client
# against a real docker-registry and against small fakes (integration), and the parsers' fuzz
# target.
add_library(neuron_registry_testing STATIC ${PROJECT_SOURCE_DIR}/tests/testing/local_registry.cc
  ${PROJECT_SOURCE_DIR}/tests/testing/compile_cache_gen.cc ${PROJECT_SOURCE_DIR}/tests/testing/csi_kubelet.cc)
add_library(neuron::registry_testing ALIAS neuron_registry_testing)
target_include_directories(neuron_registry_testing PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(neuron_registry_testing PUBLIC neuron::http_testing neuron::proto absl::str_format absl::status
  absl::statusor absl::time absl::strings PRIVATE PkgConfig::HTTPLIB)

neuron_cc_test(NAME cache_oci_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/image_reference_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/oci_manifest_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/registry_auth_test.cc
  DEPS neuron::cache_oci nlohmann_json::nlohmann_json absl::strings LABELS unit)

neuron_cc_test(NAME cache_registry_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/registry_client_test.cc
  DEPS neuron::cache_registry neuron::registry_testing LABELS integration TIMEOUT 300)

neuron_cc_test(NAME cache_registry_fake_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/registry_fake_test.cc
  DEPS neuron::cache_registry neuron::registry_testing PkgConfig::HTTPLIB LABELS integration)

neuron_fuzz_target(NAME cache_oci_fuzz
  SRCS ${PROJECT_SOURCE_DIR}/tests/fuzz/cache_oci_fuzz.cc
  DEPS neuron::cache_oci
  CORPUS ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/cache_oci)
