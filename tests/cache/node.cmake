# tests/cache/node.cmake: compiled-model caches end to end through real node-agent processes, a
# real docker-registry and the fake API server (CSI calls as the kubelet makes them).
neuron_cc_test(NAME cache_node_e2e_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/cache_node_e2e_test.cc
  SUPPORT_SRCS ${CMAKE_CURRENT_LIST_DIR}/cache_e2e_env.cc
  DEPS neuron::registry_testing neuron_cache_test_util neuron::fake_apiserver neuron::operator_app
       neuron::cache_api neuron::cache_store neuron::k8s neuron::proto neuron::http_testing
       nlohmann_json::nlohmann_json absl::strings absl::str_format
  LABELS e2e TIMEOUT 600 NEEDS neuron-node-agent)
