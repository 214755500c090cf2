// File: lib/operator/device_config_dra.cc
#include "lib/operator/device_config_dra.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"

namespace neuron::op {

const char* AllocationName(Allocation a) {
  switch (a) {
    case Allocation::kDevicePlugin:
      return "devicePlugin";
    case Allocation::kDra:
      return "dra";
    case Allocation::kMixed:
      return "mixed";
  }
  return "unknown";
}

namespace internal {
namespace {

using nlohmann::json;

void ReadDraBool(const json& obj, const char* key, bool& out, std::vector<FieldError>& problems) {
  const json& v = MemberOrNull(obj, key);
  if (v.is_boolean()) {
    out = v.get<bool>();
  } else if (!v.is_null()) {
    problems.push_back({absl::StrCat("spec.dra.", key), "must be true or false"});
  }
}

}  // namespace

void ReadAllocation(const json& spec, DeviceConfigSpec& s, std::vector<FieldError>& problems) {
  if (const json& v = MemberOrNull(spec, "allocation"); v.is_string()) {
    s.allocation_set = true;
    const std::string& name = v.get_ref<const std::string&>();
    if (name == "devicePlugin") {
      s.allocation = Allocation::kDevicePlugin;
    } else if (name == "dra") {
      s.allocation = Allocation::kDra;
    } else if (name == "mixed") {
      s.allocation = Allocation::kMixed;
    } else {
      // Not cut short: the schema's enum keeps it short, and render reads unchecked files.
      problems.push_back({"spec.allocation", absl::StrCat("unknown value \"", name.substr(0, 80),
                                                          "\": use devicePlugin, dra or mixed")});
    }
  } else if (!v.is_null()) {
    problems.push_back({"spec.allocation", "must be a string: devicePlugin, dra or mixed"});
  }
  if (const json& v = MemberOrNull(spec, "dra"); v.is_object()) {
    s.dra_set = true;
    ReadDraBool(v, "partitionableDevices", s.dra.partitionable_devices, problems);
    ReadDraBool(v, "deviceTaints", s.dra.device_taints, problems);
    ReadDraBool(v, "extendedResource", s.dra.extended_resource, problems);
  } else if (!v.is_null()) {
    problems.push_back({"spec.dra", "must be an object"});
  }
}

void CheckAllocation(const DeviceConfigSpec& s, std::vector<FieldError>& errors) {
  const bool aws = !s.dra_driver_image.empty();
  const bool plugin = !s.device_plugin_image.empty();
  const bool extender = !s.scheduler_extension_image.empty();
  const bool custom = !s.custom_scheduler_image.empty();
  if (aws && (plugin || extender || custom)) {
    errors.push_back({"spec.draDriverImage",
                      "cannot be set together with devicePluginImage, customSchedulerImage or "
                      "schedulerExtensionImage (DRA replaces the device plugin and scheduler)"});
  }
  if (aws && (s.allocation_set || s.dra_set)) {
    errors.push_back({"spec.draDriverImage",
                      "runs AWS's DRA driver and cannot be combined with allocation or dra, "
                      "which configure ours (run from devicePluginImage): set one or the other"});
  }
  if (s.dra_set && !aws && s.allocation == Allocation::kDevicePlugin) {
    errors.push_back({"spec.dra", "configures the DRA driver: set allocation to dra or mixed"});
  }
  // Something must advertise the devices: AWS's driver, or our binary in either API.
  if (!aws && !plugin) {
    errors.push_back(
        {"spec.devicePluginImage",
         s.allocation == Allocation::kDevicePlugin
             ? std::string("is required")
             : absl::StrCat("is required: allocation ", AllocationName(s.allocation),
                            " runs it as the DRA driver (neuron-device-plugin --api=dra)")});
  }
  if (s.allocation == Allocation::kDra && !aws) {
    // kube-scheduler's DRA allocator places the pods: no second scheduler, no extender.
    if (extender || custom) {
      errors.push_back({"spec.schedulerExtensionImage",
                        "allocation dra runs no extender or second scheduler: unset "
                        "schedulerExtensionImage and customSchedulerImage, or use allocation "
                        "mixed to keep them for device-plugin nodes"});
    }
    return;
  }
  // customSchedulerImage may be left out (the operator then runs the API server's version),
  // but configures nothing without the extender it calls.
  if (plugin != extender || (custom && !extender)) {
    errors.push_back({"spec.devicePluginImage",
                      "devicePluginImage and schedulerExtensionImage are set together or not at "
                      "all, customSchedulerImage only with them"});
  }
}

}  // namespace internal
}  // namespace neuron::op
