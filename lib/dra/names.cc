#include "lib/dra/names.h"

#include "absl/strings/str_cat.h"

namespace neuron::dra {

std::string DeviceName(int device) { return absl::StrCat("neurondevice", device); }

std::string CoreDeviceName(int device, int core) {
  return absl::StrCat(DeviceName(device), "-core", core);
}

std::string CounterSetName(int device) { return absl::StrCat(DeviceName(device), "-cores"); }

std::string DeviceGroupAttribute(int size) {
  return absl::StrCat(kGroupDomain, "/devicegroup", size, "_id");
}

}  // namespace neuron::dra
