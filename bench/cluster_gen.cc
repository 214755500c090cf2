// File: bench/cluster_gen.cc
#include "bench/cluster_gen.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/random.h"
#include "lib/topology/choose.h"
#include "lib/topology/node_topology.h"
#include "lib/topology/shapes.h"

namespace neuron::bench {
namespace {

using nlohmann::json;

constexpr char kDevice[] = "aws.amazon.com/neuron";
constexpr char kCore[] = "aws.amazon.com/neuroncore";

// Instance mix of a large training + inference fleet (weights out of 100).
struct MixEntry {
  const char* type;
  int weight;
};
constexpr MixEntry kMix[] = {{"trn1.32xlarge", 35}, {"trn2.48xlarge", 20}, {"inf2.48xlarge", 20},
                             {"inf2.24xlarge", 10}, {"inf1.24xlarge", 5},  {"trn1.2xlarge", 5},
                             {"inf2.xlarge", 5}};

const char* PickType(absl::InsecureBitGen& rng) {
  int r = absl::Uniform(rng, 0, 100);
  for (const MixEntry& m : kMix) {
    if (r < m.weight) return m.type;
    r -= m.weight;
  }
  return kMix[0].type;
}

json ManagedFields(const std::vector<const char*>& managers) {
  json out = json::array();
  for (const char* m : managers) {
    out.push_back(
        {{"manager", m},
         {"operation", "Update"},
         {"apiVersion", "v1"},
         {"time", "2026-11-01T10:00:00Z"},
         {"fieldsType", "FieldsV1"},
         {"fieldsV1",
          {{"f:metadata", {{"f:labels", {{"f:app", json::object()}}}}},
           {"f:status", {{"f:conditions", {{"k:{\"type\":\"Ready\"}", json::object()}}}}}}}});
  }
  return out;
}

json Condition(const char* type, const char* status) {
  return {{"type", type},
          {"status", status},
          {"lastHeartbeatTime", "2026-11-23T10:00:00Z"},
          {"lastTransitionTime", "2026-11-01T10:00:00Z"},
          {"reason", absl::StrCat("Kubelet", type)},
          {"message", "kubelet is posting ready status"}};
}

// Per node while generating: the topology and which IDs are still free.
struct NodeSlots {
  topology::NodeTopology topo;
  std::vector<bool> free_devices, free_cores;
};

}  // namespace

json SyntheticNode(const std::string& name, const std::string& instance_type) {
  const topology::Shape* shape = topology::FindShape(instance_type);
  int devices = 0, cores = 0;
  if (shape != nullptr) {
    absl::StatusOr<topology::NodeTopology> t = topology::TopologyForShape(*shape);
    if (t.ok()) {
      devices = t->devices;
      cores = t->devices * t->cores_per_device;
    }
  }
  json res = {{"cpu", "128"},
              {"memory", "2097152Mi"},
              {"pods", "250"},
              {"ephemeral-storage", "523209664Ki"},
              {"hugepages-1Gi", "0"},
              {"hugepages-2Mi", "0"},
              {"vpc.amazonaws.com/efa", "8"}};
  if (devices > 0) {
    res[kDevice] = std::to_string(devices);
    res[kCore] = std::to_string(cores);
  }
  json images = json::array();
  for (int i = 0; i < 12; ++i) {
    images.push_back({{"names",
                       {absl::StrCat("public.ecr.aws/neuron/pytorch-training-neuronx@sha256:",
                                     std::string(56, static_cast<char>('a' + i))),
                        absl::StrCat("public.ecr.aws/neuron/pytorch-training-neuronx:2.", i)}},
                      {"sizeBytes", 4000000000 + i}});
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", absl::StrCat("node-uid-", name)},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"node.kubernetes.io/instance-type", instance_type},
          {"beta.kubernetes.io/instance-type", instance_type},
          {"topology.kubernetes.io/zone", "us-east-2b"},
          {"topology.kubernetes.io/region", "us-east-2"},
          {"eks.amazonaws.com/nodegroup", "neuron"},
          {"feature.node.kubernetes.io/aws-neuron", devices > 0 ? "true" : "false"}}},
        {"annotations",
         {{"node.alpha.kubernetes.io/ttl", "0"},
          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
        {"managedFields", ManagedFields({"kubelet", "kube-controller-manager", "nfd-master"})}}},
      {"spec", {{"providerID", absl::StrCat("aws:///us-east-2b/i-0", name)}}},
      {"status",
       {{"capacity", res},
        {"allocatable", res},
        {"conditions",
         {Condition("MemoryPressure", "False"), Condition("DiskPressure", "False"),
          Condition("PIDPressure", "False"), Condition("Ready", "True")}},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", "10.0.0.1"}},
          {{"type", "Hostname"}, {"address", name}}}},
        {"nodeInfo",
         {{"kubeletVersion", "v1.32.3-eks"},
          {"containerRuntimeVersion", "containerd://1.7.27"},
          {"kernelVersion", "6.1.132-147.221.amzn2023.x86_64"},
          {"osImage", "Amazon Linux 2023"}}},
        {"images", images}}}};
}

namespace {

json PodObject(const std::string& ns, const std::string& name, const std::string& resource,
               int count) {
  json requests = {{"cpu", "8"}, {"memory", "64Gi"}};
  json limits = json::object();
  if (!resource.empty()) {
    requests[resource] = std::to_string(count);
    limits[resource] = std::to_string(count);
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", absl::StrCat("pod-uid-", ns, "-", name)},
        {"labels", {{"app", "train"}, {"job-name", name.substr(0, name.rfind('-'))}}},
        {"ownerReferences",
         {{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"name", name.substr(0, name.rfind('-'))},
           {"uid", "job-uid"},
           {"controller", true},
           {"blockOwnerDeletion", true}}}},
        {"managedFields", ManagedFields({"kube-controller-manager", "kubelet"})}}},
      {"spec",
       {{"schedulerName", "neuron-scheduler"},
        {"serviceAccountName", "default"},
        {"restartPolicy", "Never"},
        {"containers",
         {{{"name", "worker"},
           {"image", "public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2"},
           {"command", {"torchrun", "--nproc_per_node=2", "train.py"}},
           {"env",
            {{{"name", "NEURON_RT_LOG_LEVEL"}, {"value", "INFO"}},
             {{"name", "FI_PROVIDER"}, {"value", "efa"}}}},
           {"resources", {{"requests", requests}, {"limits", limits}}},
           {"volumeMounts",
            {{{"name", "kube-api-access"},
              {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
              {"readOnly", true}}}}}}},
        {"tolerations",
         {{{"key", "aws.amazon.com/neuron"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}}}},
      {"status", {{"phase", "Pending"}, {"qosClass", "Burstable"}}}};
}

}  // namespace

json SyntheticPendingPod(const std::string& ns, const std::string& name,
                         const std::string& resource, int count) {
  return PodObject(ns, name, resource, count);
}

SyntheticCluster GenerateCluster(const ClusterSpec& spec) {
  absl::InsecureBitGen seeded = MakeJitterGen(spec.seed == 0 ? 1 : spec.seed);
  SyntheticCluster c;
  std::vector<NodeSlots> slots;
  for (int i = 0; i < spec.nodes; ++i) {
    const char* type = PickType(seeded);
    const std::string name = absl::StrCat("ip-10-", i / 250, "-", i % 250, ".ec2.internal");
    c.nodes.push_back(SyntheticNode(name, type));
    c.node_names.push_back(name);
    c.node_shapes.push_back(type);
    NodeSlots s;
    s.topo = *topology::TopologyForShape(*topology::FindShape(type));
    s.free_devices.assign(s.topo.devices, true);
    s.free_cores.assign(static_cast<size_t>(s.topo.devices * s.topo.cores_per_device), true);
    slots.push_back(std::move(s));
  }
  for (int p = 0; p < spec.pods; ++p) {
    const std::string ns = absl::StrCat("team-", p % 20);
    const std::string name = absl::StrCat("job-", p / 8, "-", p % 8);
    const bool cpu_only = absl::Bernoulli(seeded, spec.cpu_only_fraction);
    const bool device = !cpu_only && absl::Bernoulli(seeded, spec.device_pod_fraction);
    const int count = cpu_only ? 0 : device ? 1 : (1 << absl::Uniform(seeded, 0, 3));  // 1,2,4
    json pod = PodObject(ns, name, cpu_only ? "" : device ? kDevice : kCore, count);
    const size_t start = absl::Uniform<size_t>(seeded, 0, slots.size());
    bool placed = false;
    for (size_t k = 0; k < std::min<size_t>(slots.size(), 64) && !placed; ++k) {
      const size_t n = (start + k) % slots.size();
      NodeSlots& s = slots[n];
      std::optional<std::vector<int>> ids;
      if (cpu_only) {
        ids = std::vector<int>{};
      } else if (device) {
        ids = topology::ChooseDevices(s.topo, s.free_devices, count);
      } else {
        ids = topology::ChooseCores(s.topo, s.free_cores, count);
      }
      if (!ids) continue;
      placed = true;
      const int cpd = s.topo.cores_per_device;
      for (int id : *ids) {  // one piece of silicon: mark both views
        if (device) {
          s.free_devices[id] = false;
          for (int k2 = 0; k2 < cpd; ++k2) s.free_cores[id * cpd + k2] = false;
        } else {
          s.free_cores[id] = false;
          s.free_devices[id / cpd] = false;
        }
      }
      pod["spec"]["nodeName"] = c.node_names[n];
      pod["status"] = {{"phase", "Running"},
                       {"qosClass", "Burstable"},
                       {"podIP", absl::StrCat("10.1.", p / 250 % 250, ".", p % 250)},
                       {"hostIP", "10.0.0.1"},
                       {"startTime", "2026-11-23T09:00:00Z"}};
      if (!cpu_only && !absl::Bernoulli(seeded, spec.unannotated_fraction)) {
        pod["metadata"]["annotations"] = {
            {"AWS_NEURON_IDS", absl::StrJoin(*ids, ",")},
            {"NEURON_RESOURCE_TYPE", device ? "neuron" : "neuroncore"},
            {"NEURON_ALLOCATED", "true"},
            {"NEURON_ALLOC_TIME", "2026-11-23T09:00:00Z"},
            {"k8s.ovn.org/pod-networks",
             R"({"default":{"ip_addresses":["10.128.2.17/23"],"role":"primary"}})"}};
      }
    }
    if (!placed) {
      ++c.unplaced_pods;
      continue;
    }
    c.pods.push_back(std::move(pod));
  }
  return c;
}

void WriteNdjson(const SyntheticCluster& cluster, std::ostream& out) {
  for (const json& n : cluster.nodes) out << n.dump() << '\n';
  for (const json& p : cluster.pods) out << p.dump() << '\n';
}

}  // namespace neuron::bench
