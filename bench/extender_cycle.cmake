# Scheduler extender cost per scheduled pod: the real binary against an in-process fake
# kube-apiserver whose request counts the driver reads.
neuron_cc_binary(NAME bench_extender_cycle SRCS ${CMAKE_CURRENT_LIST_DIR}/extender_cycle_bench.cc
  DEPS neuron::bench_cluster neuron::fake_apiserver neuron::http_testing PkgConfig::HTTPLIB
       absl::strings absl::time)
add_dependencies(bench_extender_cycle neuron-scheduler-extender)
