// File: tests/demo/demo_cluster.h
// The control plane of the demo: the fake kube-apiserver with our CRDs (and KMM's and NFD's)
// installed, two Neuron nodes, and the parts of Kubernetes that do not run here played in the
// open: the kubelet's node-status update (extended resources from what the device plugin
// advertised) and the DaemonSet, Deployment and KMM controllers marking the operator's workloads
// available (no container runs in the demo).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace neuron::demo {

inline constexpr char kOperatorNs[] = "aws-neuron-operator";
inline constexpr char kWorkloadNs[] = "ml";

class DemoCluster {
 public:
  // Starts the API server and writes a kubeconfig for it to `kubeconfig_path`.
  absl::Status Start(const std::string& source_dir, const std::string& kubeconfig_path);

  k8s::RestClient& client() { return *client_; }
  fakes::FakeApiServer& server() { return server_; }

  // A Node as the kubelet registers it, labelled as NFD labels Neuron nodes.
  absl::Status AddNode(const std::string& name, const std::string& instance_type);
  // The kubelet's status update after a device plugin's ListAndWatch: capacity and allocatable.
  absl::Status SetExtendedResources(const std::string& node, const std::string& resource,
                                    int capacity, int allocatable);
  // Creates the sample DeviceConfig (deploy/operator/samples/deviceconfig-v1beta1.yaml).
  absl::StatusOr<nlohmann::json> ApplySampleDeviceConfig();
  // Every object the operator created for the sample ("Kind name", sorted).
  absl::StatusOr<std::vector<std::string>> OperatorObjects();
  // Marks every DaemonSet, Deployment and Module of the operator available on `nodes` nodes,
  // as their controllers would once the pods run. Returns how many objects it updated.
  absl::StatusOr<int> PlayWorkloadControllers(int nodes);
  absl::StatusOr<nlohmann::json> DeviceConfig();

 private:
  absl::Status InstallCrds(const std::string& rel);

  std::string source_dir_;
  fakes::FakeApiServer server_;
  std::shared_ptr<k8s::RestClient> client_;
};

}  // namespace neuron::demo
