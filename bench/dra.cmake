# The DRA driver end to end: the real neuron-device-plugin --api=dra on an emulated
# trn2.48xlarge against the in-process fake apiserver and fake DRA kubelet.
neuron_cc_binary(NAME bench_dra SRCS ${CMAKE_CURRENT_LIST_DIR}/dra_bench.cc
  DEPS neuron::fake_apiserver neuron::fake_dra_kubelet neuron::http_testing neuron::dra
       neuron::sysfs absl::strings absl::time)
add_dependencies(bench_dra neuron-device-plugin)
