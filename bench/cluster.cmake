# A synthetic 5,000-node Neuron cluster (Node and Pod objects as the API server returns them),
# shared by the load drivers.
neuron_cc_library(NAME bench_cluster SRCS ${CMAKE_CURRENT_LIST_DIR}/cluster_gen.cc
  DEPS neuron::base neuron::topology nlohmann_json::nlohmann_json absl::random_random absl::strings)

# gen_cluster --nodes N --pods M [--seed S] > cluster.ndjson  (input for fake-apiserver --preload)
neuron_cc_binary(NAME gen_cluster SRCS ${CMAKE_CURRENT_LIST_DIR}/gen_cluster_main.cc
  DEPS neuron::bench_cluster)

# gen_dra_cluster --nodes N [--layout ours|minimal] > dra.ndjson: Nodes and our ResourceSlices
# for bench/real-scheduler-dra.sh.
neuron_cc_binary(NAME gen_dra_cluster SRCS ${CMAKE_CURRENT_LIST_DIR}/gen_dra_cluster_main.cc
  DEPS neuron::dra neuron::topology absl::strings nlohmann_json::nlohmann_json)
