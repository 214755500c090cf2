// Fuzz target: kubeconfig parsing (yaml-cpp + field validation) must never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/k8s/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  // No base_dir: relative file references resolve against the working directory and simply fail.
  auto cfg = neuron::k8s::ParseKubeconfig(in, {.context = "", .base_dir = "/nonexistent"});
  if (cfg.ok() && cfg->credentials) {
    // Exec plugins are never run from fuzz input: only static credentials are touched.
    (void)cfg->server.size();
  }
  (void)neuron::k8s::DecodeBase64(in);
  return 0;
}
