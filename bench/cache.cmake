# Compiled-model caches: NeuronCache applied -> extracted on a node (real agent, real
# docker-registry) against skopeo copy + tar -x of the same image, and the agent's peak memory.
neuron_cc_binary(NAME bench_cache_pull
  SRCS ${CMAKE_CURRENT_LIST_DIR}/cache_pull_bench.cc
  DEPS neuron::registry_testing neuron::fake_apiserver neuron::operator_app neuron::k8s
       neuron::http_testing nlohmann_json::nlohmann_json absl::strings absl::str_format absl::time)
add_dependencies(bench_cache_pull neuron-node-agent)
