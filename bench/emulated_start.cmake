# Emulated start: wall time of the real node agent / device plugin on --emulate=<shape> until
# ready, and of WriteEmulatedTree alone on tmpfs and on disk.
neuron_cc_binary(NAME bench_emulated_start SRCS ${CMAKE_CURRENT_LIST_DIR}/emulated_start_bench.cc
  DEPS neuron::sysfs neuron::inventory neuron::topology neuron::fake_kubelet neuron::http_testing
       absl::strings absl::time)
add_dependencies(bench_emulated_start neuron-node-agent neuron-device-plugin)
