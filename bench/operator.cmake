# Operator end to end: the real neuron-operator binary against the fake-apiserver binary.
neuron_cc_binary(NAME bench_operator SRCS ${CMAKE_CURRENT_LIST_DIR}/operator_bench.cc
  DEPS neuron::operator_app neuron::k8s neuron::http_testing absl::strings absl::time)
target_compile_definitions(bench_operator PRIVATE NEURON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(bench_operator neuron-operator fake-apiserver)
