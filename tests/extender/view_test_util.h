// File: tests/extender/view_test_util.h
// Node and Pod objects shaped as the API server returns them, for the extender's tests.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace neuron::extender::testutil {

using nlohmann::json;

inline constexpr char kDev[] = "aws.amazon.com/neuron";
inline constexpr char kCore[] = "aws.amazon.com/neuroncore";

// A node with the instance-type label; allocatable/capacity of both resources if given (> 0).
inline json Node(const std::string& name, const std::string& instance_type, int devices = 0,
                 int cores = 0, const json& extra_labels = json::object()) {
  json labels = extra_labels;
  if (!instance_type.empty()) labels["node.kubernetes.io/instance-type"] = instance_type;
  labels["kubernetes.io/hostname"] = name;
  json res = {{"cpu", "128"}, {"memory", "512Gi"}, {"pods", "110"}};
  if (devices > 0) res[kDev] = std::to_string(devices);
  if (cores > 0) res[kCore] = std::to_string(cores);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"capacity", res}, {"allocatable", res}}}};
}

// A pod requesting `count` of `resource` (limits and requests, as users write them), bound to
// `node` if non-empty, with the handshake annotations if `ids` is non-empty.
inline json Pod(const std::string& name, const std::string& resource, int count,
                const std::string& node = "", const std::string& ids = "",
                const std::string& ns = "ml") {
  json q = {{resource, std::to_string(count)}, {"cpu", "1"}};
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}}},
              {"spec",
               {{"schedulerName", "neuron-scheduler"},
                {"containers",
                 {{{"name", "main"},
                   {"image", "trainer:1"},
                   {"resources", {{"limits", q}, {"requests", q}}}}}}}},
              {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (!ids.empty()) {
    pod["metadata"]["annotations"] = {
        {"AWS_NEURON_IDS", ids},
        {"NEURON_RESOURCE_TYPE", resource == kDev ? "neuron" : "neuroncore"},
        {"NEURON_ALLOCATED", "true"}};
  }
  return pod;
}

}  // namespace neuron::extender::testutil
