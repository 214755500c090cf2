# lib/k8s: watch decode throughput and informer memory (5,000 Nodes + 50,000 Pods, trimmed)
# against the fake-apiserver binary running as a separate process.
neuron_cc_binary(NAME bench_k8s SRCS ${CMAKE_CURRENT_LIST_DIR}/k8s_bench.cc
  DEPS neuron::k8s benchmark::benchmark)
add_dependencies(bench_k8s fake-apiserver)
