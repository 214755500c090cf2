// Names the Neuron DRA driver publishes, spelled as AWS's driver spells them so that AWS's
// ResourceClaimTemplates (deviceClassName neuron.aws.com, matchAttribute
// resource.aws.com/devicegroup4_id, CEL on device.attributes['neuron.aws.com']) work unchanged.
#ifndef NEURON_LIB_DRA_NAMES_H_
#define NEURON_LIB_DRA_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace neuron::dra {

// Driver name, attribute domain and CDI vendor.
inline constexpr absl::string_view kDriverName = "neuron.aws.com";
// Domain of the device-group attributes, shared with AWS's EFA (DraNet) devices so one
// matchAttribute constraint can align Neuron devices and network interfaces.
inline constexpr absl::string_view kGroupDomain = "resource.aws.com";

// resourceType values.
inline constexpr absl::string_view kResourceTypeDevice = "neuron_device";
inline constexpr absl::string_view kResourceTypeCore = "neuron_core";  // partitions (ours)
// The one device of an UltraServer node standing for the whole node (AWS's resourceType).
inline constexpr absl::string_view kResourceTypeNode = "neuron_node";

// The name of that device. AWS's documentation names only its resourceType; claims select it
// by resourceType, never by name.
inline constexpr absl::string_view kNodeDeviceName = "neuronnode";

// Taint key on unhealthy devices (gate DRADeviceTaints).
inline constexpr absl::string_view kUnhealthyTaintKey = "neuron.aws.com/unhealthy";

// The one counter of each device's counter set: its logical NeuronCores.
inline constexpr absl::string_view kCoresCounter = "cores";

// "neurondevice3".
std::string DeviceName(int device);
// "neurondevice3-core1": core 1 (logical, counted within the device) of device 3.
std::string CoreDeviceName(int device, int core);
// "neurondevice3-cores": the counter set of device 3 (a DNS label, as the API requires).
std::string CounterSetName(int device);
// "resource.aws.com/devicegroup4_id".
std::string DeviceGroupAttribute(int size);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_NAMES_H_
