# Device plugin latencies over real unix sockets with the fake kubelet.
neuron_cc_binary(NAME bench_deviceplugin SRCS ${CMAKE_CURRENT_LIST_DIR}/deviceplugin_bench.cc
  DEPS neuron::deviceplugin neuron::fake_kubelet neuron::testing benchmark::benchmark)
