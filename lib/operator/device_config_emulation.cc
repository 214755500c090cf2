// File: lib/operator/device_config_emulation.cc
#include "lib/operator/device_config_emulation.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/sysfs/emulator.h"
#include "lib/topology/device_model.h"
#include "lib/topology/shapes.h"

namespace neuron::op::internal {
namespace {

using nlohmann::json;

// Where the emulated sysfs tree is written in the container (an emptyDir).
constexpr char kEmulatedDir[] = "/var/run/neuron-emulated";

// The emptyDir's sizeLimit in MiB: the tree's tmpfs size with 50% headroom (fault injection
// writes temp files; new driver attributes), in 16 MiB steps. trn2.48xlarge: 96 MiB for 54 MiB.
int64_t EmulatedTreeMiB(const std::string& instance_type) {
  const topology::Shape* shape = topology::FindShape(instance_type);
  const std::optional<topology::DeviceModel> model =
      shape == nullptr ? std::nullopt : topology::ModelForPciDevice(shape->pci_device_id);
  if (!model) return 128;
  constexpr uint64_t kStep = 16ULL << 20;
  const uint64_t bytes = sysfs::EmulatedTreeBytes(shape->devices, model->physical_cores) * 3 / 2;
  return static_cast<int64_t>((bytes + kStep - 1) / kStep * 16);
}

// "64Mi" / "1Gi" + `mib`; other quantities are left as they are.
void AddMiB(json& quantity, int64_t mib) {
  if (!quantity.is_string()) return;
  const std::string q = quantity.get<std::string>();
  int64_t n = 0;
  if (q.size() < 3 || !absl::SimpleAtoi(q.substr(0, q.size() - 2), &n)) return;
  if (absl::EndsWith(q, "Mi")) {
    quantity = absl::StrCat(n + mib, "Mi");
  } else if (absl::EndsWith(q, "Gi")) {
    quantity = absl::StrCat(n * 1024 + mib, "Mi");
  }
}

}  // namespace

void ReadEmulation(const json& spec, DeviceConfigSpec& s, std::vector<FieldError>& problems) {
  const json& v = MemberOrNull(spec, "emulation");
  if (v.is_null()) return;
  if (!v.is_object()) {
    problems.push_back({"spec.emulation", "must be an object {instanceType, lnc}"});
    return;
  }
  Emulation e;
  if (const json& t = MemberOrNull(v, "instanceType"); t.is_string()) {
    e.instance_type = t.get<std::string>();
  } else if (!t.is_null()) {
    problems.push_back({"spec.emulation.instanceType", "must be a string"});
  }
  if (const json& l = MemberOrNull(v, "lnc"); l.is_number_integer()) {
    e.lnc = l.get<int>();
  } else if (!l.is_null()) {
    problems.push_back({"spec.emulation.lnc", "must be 1 or 2"});
  }
  s.emulation = e;
  s.driver_mode = DriverMode::kPreinstalled;
}

void CheckEmulation(const DeviceConfigSpec& s, std::vector<FieldError>& errors) {
  if (!s.emulation) return;
  const Emulation& e = *s.emulation;
  const topology::Shape* shape = topology::FindShape(e.instance_type);
  if (shape == nullptr) {
    std::string known;
    for (const topology::Shape& k : topology::AllShapes()) {
      absl::StrAppend(&known, known.empty() ? "" : ", ", k.instance_type);
    }
    errors.push_back({"spec.emulation.instanceType",
                      absl::StrCat(e.instance_type.empty()
                                       ? "is required"
                                       : absl::StrCat("\"", e.instance_type, "\" is not modelled"),
                                   ": one of ", known)});
  } else if (e.lnc != 0) {
    const std::optional<topology::DeviceModel> model =
        topology::ModelForPciDevice(shape->pci_device_id);
    if (e.lnc != 1 && e.lnc != 2) {
      errors.push_back({"spec.emulation.lnc", "must be 1 or 2"});
    } else if (model && !model->lnc_capable && e.lnc != model->default_lnc) {
      errors.push_back({"spec.emulation.lnc", absl::StrCat(e.instance_type,
                                                           " has no Logical NeuronCore setting: "
                                                           "leave lnc unset")});
    }
  }
  if (!s.dra_driver_image.empty()) {
    errors.push_back({"spec.emulation",
                      "AWS's DRA driver (draDriverImage) cannot emulate devices: use allocation "
                      "dra (our driver) or the device plugin"});
  }
}

void AddEmulation(const DeviceConfig& dc, json& container, json& volumes) {
  if (!dc.Emulated()) return;
  const Emulation& e = *dc.spec.emulation;
  json& args = container["args"];
  args.push_back(absl::StrCat("--emulate=", e.instance_type));
  args.push_back(absl::StrCat("--emulate-dir=", kEmulatedDir));
  if (e.lnc != 0) args.push_back(absl::StrCat("--lnc=", e.lnc));
  container["volumeMounts"].push_back({{"name", "emulated"}, {"mountPath", kEmulatedDir}});
  // On a tmpfs: ~14k small files write in ~0.3 s there, in seconds on a node's disk. Its pages
  // are charged to the container's memory, so its memory request and limit grow by as much.
  const int64_t mib = EmulatedTreeMiB(e.instance_type);
  volumes.push_back({{"name", "emulated"},
                     {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", absl::StrCat(mib, "Mi")}}}});
  if (!container.contains("resources")) return;
  json& resources = container["resources"];
  for (const char* kind : {"requests", "limits"}) {
    if (resources.contains(kind) && resources[kind].contains("memory")) {
      AddMiB(resources[kind]["memory"], mib);
    }
  }
}

void AvoidNeuronNodes(const DeviceConfig& dc, json& pod_spec) {
  if (!dc.Emulated()) return;
  json shapes = json::array();
  for (const topology::Shape& s : topology::AllShapes()) shapes.push_back(s.instance_type);
  auto not_in = [](const char* key, json values) {
    return json{{"key", key}, {"operator", "NotIn"}, {"values", std::move(values)}};
  };
  // One term, every expression ANDed; NotIn also matches nodes without the label. Not
  // feature.node.kubernetes.io/aws-neuron: the emulated node agent publishes it itself. The
  // plugin and agent also refuse to start over real devices (inventory::CheckNoRealDevices).
  json term = {{"matchExpressions",
                json::array({not_in("feature.node.kubernetes.io/pci-1d0f.present", {"true"}),
                             not_in("feature.node.kubernetes.io/pci-0880_1d0f.present", {"true"}),
                             not_in("aws.amazon.com/neuron-node", {"true"}),
                             not_in("node.kubernetes.io/instance-type", shapes)})}};
  pod_spec["affinity"] = {{"nodeAffinity",
                           {{"requiredDuringSchedulingIgnoredDuringExecution",
                             {{"nodeSelectorTerms", json::array({std::move(term)})}}}}}};
}

}  // namespace neuron::op::internal
