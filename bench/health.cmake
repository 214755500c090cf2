# Health latency end to end (fault write -> ListAndWatch / -> /metrics) and the CPU of the health
# fast path, on an emulated trn2.48xlarge.
neuron_cc_binary(NAME bench_health SRCS ${CMAKE_CURRENT_LIST_DIR}/health_bench.cc
  DEPS neuron::deviceplugin_app neuron::agent neuron::fake_kubelet neuron::http_testing
       neuron::inventory neuron::sysfs spdlog::spdlog ZLIB::ZLIB absl::strings absl::time)
