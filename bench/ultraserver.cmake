# The extender's filter and prioritize for UltraServer pod groups at 5,000 trn2u nodes.
neuron_cc_binary(NAME bench_extender_ultraserver
  SRCS ${CMAKE_CURRENT_LIST_DIR}/extender_ultraserver_bench.cc
  DEPS neuron::bench_cluster neuron::extender_app neuron::ultraserver absl::strings)
