// PCI device ids of AWS Neuron chips and what each chip family provides.
#ifndef NEURON_LIB_TOPOLOGY_DEVICE_MODEL_H_
#define NEURON_LIB_TOPOLOGY_DEVICE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

namespace neuron::topology {

// PCI vendor id of every Neuron chip (Amazon / Annapurna Labs).
inline constexpr uint16_t kNeuronPciVendor = 0x1d0f;

enum class Family { kInferentia, kTrainium, kInferentia2, kTrainium2, kTrainium3 };

// "inferentia", "trainium", "inferentia2", "trainium2", "trainium3".
std::string FamilyName(Family f);

// One Neuron chip model, keyed by the PCI device id it reports.
struct DeviceModel {
  uint16_t pci_device_id;
  Family family;
  int physical_cores;  // NeuronCores per device (inf1 4, trn1/inf2 2, trn2/trn3 8)
  bool lnc_capable;    // trn2, trn3: Logical NeuronCore config (LNC) 1 or 2 is supported
  int default_lnc;     // 1; 2 on trn2/trn3
};

// Known ids (vendor 0x1d0f): 0x7064..0x7067 Inferentia, 0x7164 Trainium, 0x7264 Inferentia2,
// 0x7364 Trainium2, 0x7564/0x7565 Trainium3. nullopt for unknown ids.
std::optional<DeviceModel> ModelForPciDevice(uint16_t device_id);

}  // namespace neuron::topology

#endif  // NEURON_LIB_TOPOLOGY_DEVICE_MODEL_H_
