# Scheduler extender end to end: the real neuron-scheduler-extender binary against the
# fake-apiserver binary preloaded with a synthetic 5,000-node cluster, driven over HTTP.
neuron_cc_binary(NAME bench_extender_load SRCS ${CMAKE_CURRENT_LIST_DIR}/extender_load_bench.cc
  DEPS neuron::bench_cluster neuron::k8s neuron::http_testing PkgConfig::HTTPLIB absl::strings
       absl::time)
add_dependencies(bench_extender_load neuron-scheduler-extender fake-apiserver)
neuron_simdjson_sources(${CMAKE_CURRENT_LIST_DIR}/extender_load_bench.cc)
