// File: lib/inventory/lnc.h
// Logical NeuronCore configuration (LNC): how many physical NeuronCores the runtime groups into
// one logical core. The driver's core_count is blind to it (it prints physical cores), so the
// logical count the node advertises is physical / LNC, and LNC must come from where the runtime
// takes it. Resolution order (first that is set wins):
//   1. --lnc flag (0 = unset)
//   2. env NEURON_LOGICAL_NC_CONFIG (the runtime's own variable)
//   3. <host-root>/opt/aws/neuron/logical_nc_config (written by EKS node user data)
//   4. the family default: 2 on Trainium2 ("LNC=2 is the default setting on Trainium2 devices",
//      about-neuron/arch/neuron-features/logical-neuroncore-config.rst) and Trainium3 (neuronx-cc
//      "defaults to LNC=2 on Trn2 and later", compiler/error-codes/EVRF066); 1 elsewhere
//      (inf1, inf2, trn1 are not LNC-capable: "On trn1, only lnc=1 is supported", EARG001).
// Valid values are 1 and 2 ("an LNC degree of either 1 or 2", nki/get-started/about/lnc.rst),
// and 2 only on LNC-capable chips. A bad value is an error naming its source; it is never
// silently replaced by the default.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/sysfs/fs.h"
#include "lib/topology/device_model.h"

namespace neuron::inventory {

inline constexpr char kLncEnvVar[] = "NEURON_LOGICAL_NC_CONFIG";
inline constexpr char kLncHostFile[] = "opt/aws/neuron/logical_nc_config";

enum class LncSource { kFlag, kEnv, kFile, kDefault };
// "flag", "env", "file", "default".
std::string LncSourceName(LncSource s);

struct LncInputs {
  int flag = 0;                    // --lnc; 0 = not given
  std::optional<std::string> env;  // value of NEURON_LOGICAL_NC_CONFIG, if set
  // Reads the environment variable into `env` (binaries; tests set `env` directly).
  static LncInputs FromEnvironment(int flag);
};

struct LncSetting {
  int value = 1;
  LncSource source = LncSource::kDefault;
  std::string origin;  // "--lnc", "NEURON_LOGICAL_NC_CONFIG", "/opt/aws/neuron/...", "default"
};

// Resolves LNC for a node whose chips are `model` (nullopt: no known device, LNC 1 unless set).
// InvalidArgument naming the source ("--lnc", the env var, or the file path) for a value that
// is not 1 or 2, garbage, or 2 on a chip without LNC. An unreadable file other than NotFound is
// Unavailable (retry next scan).
absl::StatusOr<LncSetting> ResolveLnc(const sysfs::Fs& fs, const LncInputs& in,
                                      const std::optional<topology::DeviceModel>& model);

// Checks a flag value before anything runs: 0 (unset), 1 or 2. The family check waits for the
// first scan.
absl::Status ValidateLncFlag(int flag);

}  // namespace neuron::inventory
