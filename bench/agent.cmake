# Node agent: scrape latency and RSS of the real binary on an emulated trn2.48xlarge.
neuron_cc_binary(NAME bench_agent_scrape SRCS ${CMAKE_CURRENT_LIST_DIR}/agent_scrape_bench.cc
  DEPS neuron::http_testing absl::strings absl::time)
add_dependencies(bench_agent_scrape neuron-node-agent)

# Node agent: CPU and RSS of the real binary with pod attribution on while 64 pods churn.
neuron_cc_binary(NAME bench_agent_churn SRCS ${CMAKE_CURRENT_LIST_DIR}/agent_churn_bench.cc
  DEPS neuron::fake_kubelet neuron::http_testing neuron::httpserver absl::strings absl::time
       absl::status absl::statusor)
add_dependencies(bench_agent_churn neuron-node-agent)
