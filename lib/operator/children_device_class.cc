// File: lib/operator/children_device_class.cc
// The DeviceClasses of our DRA driver, as deploy/dra/deviceclass*.yaml write them by hand, at
// the resource.k8s.io version the cluster serves. Their names are fixed (AWS's templates name
// neuron.aws.com), so they are cluster-wide: a second DRA DeviceConfig applies the same objects.
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr char kDriverName[] = "neuron.aws.com";

// One selector: kube-scheduler evaluates each selector of the class for each candidate device
// of each node it filters, at a fixed cost per evaluation (bench/README.md, "DRA at scale").
// The driver check comes first: && stops there on other drivers' devices, where the attribute
// lookup would be a CEL error that aborts the allocation.
// `resource_type_test`: "== 'neuron_core'" or "in ['neuron_device', 'neuron_node']".
json Selectors(const char* resource_type_test) {
  return json::array({{{"cel",
                        {{"expression", std::string("device.driver == '") + kDriverName +
                                            "' && device.attributes['" + kDriverName +
                                            "'].resourceType " + resource_type_test}}}}});
}

Child DeviceClass(const DeviceConfig& dc, const ClusterApis& apis, const std::string& name,
                  const char* resource_type_test) {
  const k8s::ResourceRef ref = DeviceClasses(apis.dra_version);
  json obj = Object(dc, ref.GroupVersion(), "DeviceClass", name, Component::kDra,
                    /*namespaced=*/false);
  obj["spec"] = {{"selectors", Selectors(resource_type_test)}};
  return {ref, std::move(obj), Component::kDra};
}

}  // namespace

void AddDeviceClasses(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  if (!apis.DraServed()) return;  // the reconciler refuses DRA then (condition DRANotServed)
  // Whole devices, and UltraServer nodes' node device: the class AWS's ResourceClaimTemplates
  // name (its UltraServer templates select resourceType neuron_node in it).
  out.push_back(DeviceClass(dc, apis, kDriverName, "in ['neuron_device', 'neuron_node']"));
  if (dc.spec.dra.partitionable_devices) {
    // One logical NeuronCore of a device; it shares a counter set with its whole device.
    out.push_back(DeviceClass(dc, apis, "neuroncore.aws.com", "== 'neuron_core'"));
  }
  // extendedResourceName exists only in resource.k8s.io/v1 (DRAExtendedResource, 1.34): pods
  // asking for aws.amazon.com/neuron are served by DRA on nodes without the device plugin.
  if (dc.spec.dra.extended_resource && apis.dra_version == "v1") {
    Child c = DeviceClass(dc, apis, "extended-resource.neuron.aws.com", "== 'neuron_device'");
    c.object["spec"]["extendedResourceName"] = "aws.amazon.com/neuron";
    out.push_back(std::move(c));
  }
}

}  // namespace neuron::op::internal
