# CPU per extender call in process, stage by stage (decode, decide, encode, whole handler).
neuron_cc_binary(NAME bench_extender SRCS ${CMAKE_CURRENT_LIST_DIR}/extender_bench.cc
  DEPS neuron::bench_cluster neuron::extender_app benchmark::benchmark absl::strings)
