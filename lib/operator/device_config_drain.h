// File: lib/operator/device_config_drain.h
// spec.upgradePolicy.drain: how a node's Neuron workloads leave before its driver is moved.
// Enabled, a node is cordoned and its Neuron pods are evicted through the Eviction API
// (policy/v1 pods/eviction, so PodDisruptionBudgets hold) before KMM is told to move the
// driver; no NoExecute taint evicts anything behind the budgets' back. Off (the default), the
// node is tainted aws-neuron-driver-upgrade=true:NoExecute, as before.
//
//   upgradePolicy:
//     drain:
//       enable: true
//       timeout: 10m              # then the node fails (or, with force, its pods are deleted)
//       podSelector: {app: x}     # default: pods that request Neuron devices or cores
//       deleteEmptyDirData: false # pods with emptyDir volumes are evicted only when true
//       force: false
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

struct FieldError;

struct DrainPolicy {
  bool enable = false;
  absl::Duration timeout = absl::Minutes(10);
  std::map<std::string, std::string> pod_selector;  // empty: pods using Neuron resources
  bool delete_emptydir_data = false;
  bool force = false;  // after the timeout, delete the pods left instead of failing the node
};

// The DeviceConfig annotation that retries failed nodes: each new value sends every node that
// failed back to pending, once (the value handled last is kept in status.upgrade).
inline constexpr char kRetryUpgradeAnnotation[] = "k8s.aws/retry-failed-upgrade";

namespace internal {
// Reads spec.upgradePolicy.drain (an object) into `p`, adding a FieldError per bad field.
void ReadDrainPolicy(const nlohmann::json& drain, DrainPolicy& p,
                     std::vector<FieldError>& problems);
}  // namespace internal

// Whether a drain moves `pod` off its node: the policy's podSelector, else a request or limit
// of an aws.amazon.com/neuron* resource in any container (or a DRA resource claim). DaemonSet
// pods, mirror pods and finished pods (Succeeded/Failed) never are.
bool DrainsPod(const nlohmann::json& pod, const DrainPolicy& policy);
// Why a drain may not evict `pod` now ("" = it may): an emptyDir volume without
// deleteEmptyDirData.
std::string EvictionBlocker(const nlohmann::json& pod, const DrainPolicy& policy);

}  // namespace neuron::op
