# The cache API as both the node side and the operator read it (no I/O).
neuron_cc_library(NAME cache_api
  SRCS cache_api.cc
  DEPS neuron::k8s neuron::base nlohmann_json::nlohmann_json absl::status absl::statusor absl::time
  PRIVATE_DEPS absl::strings)
