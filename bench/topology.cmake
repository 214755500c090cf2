# Decisions per second of lib/topology's chooser on fragmented nodes.
neuron_cc_binary(NAME bench_topology SRCS ${CMAKE_CURRENT_LIST_DIR}/topology_bench.cc
  DEPS neuron::topology benchmark::benchmark)
