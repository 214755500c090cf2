// File: tests/cache/cache_e2e_env.h
// Compiled-model caches end to end on one machine: the fake kube-apiserver with our cache CRDs
// (from deploy/), a real docker-registry with images pushed by scripts/pack-neuron-cache.sh, and
// real neuron-node-agent processes (emulated chips) that pull, extract and serve the CSI driver
// under a temporary kubelet directory. The test plays the operator (status.resolvedDigest) and
// the kubelet (CSI calls on the agent's socket).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"
#include "tests/cache/layer_test_util.h"  // ReadFile
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/compile_cache_gen.h"
#include "tests/testing/csi_kubelet.h"
#include "tests/testing/local_registry.h"
#include "tests/testing/subprocess.h"

namespace neuron::cache::testing {

using nlohmann::json;

class CacheCluster {
 public:
  CacheCluster();
  ~CacheCluster();

  const std::string& dir() const { return dir_; }
  k8s::RestClient& client() { return *client_; }
  neuron::testing::LocalRegistry& registry() { return *registry_; }
  fakes::FakeApiServer& api() { return api_; }

  // A compile cache generated from `spec`, pushed as <registry>/<repo_tag>; its digest.
  std::string Push(const std::string& repo_tag, const neuron::testing::CompileCacheSpec& spec);
  // A Node object and a node agent emulating `instance_type` for it.
  neuron::testing::Subprocess& StartAgent(const std::string& node,
                                          const std::string& instance_type);
  void StopAgent(const std::string& node, bool kill = false);
  std::string CacheDir(const std::string& node) const { return dir_ + "/cache-" + node; }
  std::string KubeletDir(const std::string& node) const { return dir_ + "/kubelet-" + node; }
  int MetricsPort(const std::string& node) const { return ports_.at(node); }

  // A NeuronCache team/<name> for `image`; `resolved` plays the operator's status.resolvedDigest.
  void ApplyCache(const std::string& name, const std::string& image, const std::string& resolved);
  void SetResolved(const std::string& name, const std::string& digest);
  // This node's NeuronCacheNode record for team/<name> (null while absent).
  json Record(const std::string& node, const std::string& name);
  // Waits until the record's state is `state` (and digest, when given); returns the record.
  json WaitForState(const std::string& node, const std::string& name, const std::string& state,
                    const std::string& digest = "", absl::Duration timeout = absl::Seconds(60));

  // The kubelet's side of an inline volume for pod team/<pod> naming NeuronCache `cache`.
  grpc::Status Publish(const std::string& node, const std::string& pod, const std::string& cache,
                       std::string* target);
  grpc::Status Unpublish(const std::string& node, const std::string& pod);
  neuron::testing::InlineVolume Volume(const std::string& node, const std::string& pod,
                                       const std::string& cache) const;

 private:
  std::string dir_;
  fakes::FakeApiServer api_;
  std::shared_ptr<k8s::RestClient> client_;
  std::unique_ptr<neuron::testing::LocalRegistry> registry_;
  std::string kubeconfig_;
  std::map<std::string, std::unique_ptr<neuron::testing::Subprocess>> agents_;
  std::map<std::string, std::string> emulate_;
  std::map<std::string, int> ports_;
};

// The file the Neuron compiler would read for module `m` in a cache mounted at `root`.
std::string NeffFor(const std::string& root, const neuron::testing::CompileCacheSpec& spec,
                    const neuron::testing::GeneratedModule& m);

}  // namespace neuron::cache::testing
