# The cache API as both the node side and the operator read it (no I/O).
neuron_cc_library(NAME cache_api
  SRCS cache_api.cc
  DEPS neuron::k8s neuron::base nlohmann_json::nlohmann_json absl::status absl::statusor absl::time
  PRIVATE_DEPS absl::strings)

# The node controller: caches wanted on this node -> pulled (registry), extracted (store),
# reported (NeuronCacheNode), with metrics. Runs inside the node agent.
neuron_cc_library(NAME cache_node
  SRCS puller.cc node_metrics.cc node_controller.cc node_report.cc
  DEPS neuron::cache_api neuron::cache_registry neuron::cache_store neuron::cache_oci neuron::k8s
       neuron::topology neuron::base prometheus-cpp::core absl::status absl::statusor
       absl::synchronization absl::time
  PRIVATE_DEPS absl::strings spdlog::spdlog)
