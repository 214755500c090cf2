// File: tests/demo/demo_cache.h
// The demo's compiled-model cache step: a real docker-registry on loopback, a generated Neuron
// compile cache (trn2) packed and pushed with scripts/pack-neuron-cache.sh, a NeuronCache by tag
// that the operator resolves, the node agents pulling it (Extracted on the trn2 node,
// Incompatible on the trn1 node), and a pod's inline CSI volume as the kubelet would mount it:
// the compiler's lookup finds the NEFF, a new graph stays private to the pod.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lib/k8s/rest_client.h"
#include "tests/testing/local_registry.h"

namespace neuron::demo {

class CacheDemo {
 public:
  absl::Status Start();  // the registry
  std::string registry_host() const { return registry_->host(); }
  // The node agent's cache flags for a node whose files live under `dir`.
  std::vector<std::string> AgentFlags(const std::string& dir) const;

  // Pushes, applies, waits for the nodes and mounts on `mount_node`; prints as it goes. Returns
  // (expectation, held) pairs for the demo's verdict.
  std::vector<std::pair<std::string, bool>> Run(
      k8s::RestClient& client, const std::string& ns,
      const std::vector<std::pair<std::string, std::string>>& nodes /* name, dir */,
      const std::string& mount_node, const std::string& work);

 private:
  std::unique_ptr<testing::LocalRegistry> registry_;
};

}  // namespace neuron::demo
