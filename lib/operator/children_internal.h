// File: lib/operator/children_internal.h
// What every child builder shares: object metadata (names, labels, ownerReference), pod
// template details (pull secret, node placement), and the builders per component.
#pragma once

#include <string>
#include <vector>

#include "lib/operator/children.h"
#include "nlohmann/json.hpp"

namespace neuron::op::internal {

using nlohmann::json;

// apiVersion/kind/metadata for a child. Namespaced children live in dc.ns with a controller
// ownerReference; cluster-scoped ones only carry the owner label.
json Object(const DeviceConfig& dc, const char* api_version, const char* kind,
            const std::string& name, Component component, bool namespaced = true);

// Labels selecting the pods of workload `name` (also put on its pod template).
json SelectorLabels(const std::string& name);
// Pod template labels: the selector labels plus part-of.
json PodLabels(const std::string& name);

// Adds imagePullSecrets (spec.imageRepoSecret) to a pod spec.
void AddPullSecret(const DeviceConfig& dc, json& pod_spec);
// Where node-level pods run: the selector as nodeSelector, or (empty selector) any node that
// looks like a Neuron node (NFD's PCI labels, a Neuron instance type, or a label set by hand).
void PlaceOnNeuronNodes(const DeviceConfig& dc, json& pod_spec);

json ServiceAccount(const DeviceConfig& dc, const std::string& name, Component component);
// A ClusterRole named `name` with `rules`, and its binding to the service account `sa`.
void AddClusterRole(const DeviceConfig& dc, const std::string& name, const json& rules,
                    const std::string& sa, Component component, std::vector<Child>& out);
// Cluster-scoped names carry the namespace: two DeviceConfigs of one name in two namespaces
// must not share them.
std::string ClusterName(const DeviceConfig& dc, const std::string& suffix);

// Per component, appended in apply order.
void AddDriver(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
               std::vector<Child>& out);
void AddPreinstalledPlugin(const DeviceConfig& dc, const OperatorSettings& s,
                           std::vector<Child>& out);
void AddScheduler(const DeviceConfig& dc, const OperatorSettings& s, std::vector<Child>& out);
void AddMetrics(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                std::vector<Child>& out);
void AddNfdRule(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
void AddDra(const DeviceConfig& dc, std::vector<Child>& out);

// The device plugin's container (our neuron-device-plugin) and the volumes it mounts.
json DevicePluginContainer(const std::string& image);
json DevicePluginVolumes();
json DevicePluginRbacRules();

}  // namespace neuron::op::internal
