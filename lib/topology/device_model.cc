#include "lib/topology/device_model.h"

#include <array>

namespace neuron::topology {
namespace {

// Source: aws-neuron-driver neuron_device.h / neuron_pci.c (INF1_DEVICE_ID0..3, TRN1_DEVICE_ID0,
// INF2_DEVICE_ID0, TRN2_DEVICE_ID0) and the newer driver's Trainium3 ids; cores per device from
// the Neuron architecture docs (NeuronCore-v1 x4, v2 x2, v3 x8, v4 x8).
constexpr std::array<DeviceModel, 9> kModels = {{
    {0x7064, Family::kInferentia, 4, false, 1},
    {0x7065, Family::kInferentia, 4, false, 1},
    {0x7066, Family::kInferentia, 4, false, 1},
    {0x7067, Family::kInferentia, 4, false, 1},
    {0x7164, Family::kTrainium, 2, false, 1},
    {0x7264, Family::kInferentia2, 2, false, 1},
    {0x7364, Family::kTrainium2, 8, true, 2},
    {0x7564, Family::kTrainium3, 8, true, 2},
    {0x7565, Family::kTrainium3, 8, true, 2},
}};

}  // namespace

std::string FamilyName(Family f) {
  switch (f) {
    case Family::kInferentia:
      return "inferentia";
    case Family::kTrainium:
      return "trainium";
    case Family::kInferentia2:
      return "inferentia2";
    case Family::kTrainium2:
      return "trainium2";
    case Family::kTrainium3:
      return "trainium3";
  }
  return "unknown";
}

std::optional<DeviceModel> ModelForPciDevice(uint16_t device_id) {
  for (const DeviceModel& m : kModels) {
    if (m.pci_device_id == device_id) return m;
  }
  return std::nullopt;
}

}  // namespace neuron::topology
