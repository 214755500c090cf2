# Node agent: scrape latency and RSS of the real binary on an emulated trn2.48xlarge.
neuron_cc_binary(NAME bench_agent_scrape SRCS ${CMAKE_CURRENT_LIST_DIR}/agent_scrape_bench.cc
  DEPS neuron::http_testing absl::strings absl::time)
add_dependencies(bench_agent_scrape neuron-node-agent)
