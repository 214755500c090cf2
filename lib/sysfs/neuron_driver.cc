// File: lib/sysfs/neuron_driver.cc
#include "lib/sysfs/neuron_driver.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace neuron::sysfs {
namespace {

// "neuron12" -> 12; "neuron", "neuronX", "neuron-1", "neuron012" -> nullopt.
std::optional<int> SuffixIndex(absl::string_view name, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&name, prefix) || name.empty() || name.size() > 4) return std::nullopt;
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int v = 0;
  if (!absl::SimpleAtoi(name, &v)) return std::nullopt;
  return v;
}

absl::StatusOr<std::vector<int>> ListIndexed(const Fs& fs, const std::string& dir,
                                             absl::string_view prefix) {
  auto names = fs.ListDir(dir);
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) return std::vector<int>{};
    return names.status();
  }
  std::vector<int> out;
  for (const std::string& n : *names) {
    if (auto i = SuffixIndex(n, prefix)) out.push_back(*i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string NeuronDeviceDir(int index) { return absl::StrCat(kNeuronClassDir, "/neuron", index); }
std::string NeuronCoreDir(int index, int core) {
  return absl::StrCat(NeuronDeviceDir(index), "/neuron_core", core);
}
std::string NeuronDevNode(int index) { return absl::StrCat("dev/neuron", index); }
std::string PciFunctionDir(const std::string& address) {
  return absl::StrCat("sys/bus/pci/devices/", address);
}

const std::vector<std::string>& HardwareCounterNames() {
  static const auto* const k = new std::vector<std::string>{
      "mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected", "sram_ecc_uncorrected",
      "mem_ecc_corrected", "sram_ecc_corrected"};  // the corrected ones since driver 2.30
  return *k;
}

const std::vector<std::string>& HostMemCategories() {
  static const auto* const k = new std::vector<std::string>{
      "application_memory", "constants",     "dma_buffers", "dma_rings",
      "driver_memory",      "notifications", "tensors",     "uncategorized"};
  return *k;
}

const std::vector<std::string>& CoreStatusCounterNames() {
  static const auto* const k = new std::vector<std::string>{
      "success",
      "failure",
      "timeout",
      "exec_bad_input",
      "hw_error",
      "execute_completed_with_error",
      "execute_completed_with_num_error",
      "execute_failed_to_queue",
      "generic_error",
      "resource_error",
      "resource_nc_error",
      "invalid_error",
      "unsupported_neff_version",
      "oob_error",
      "hw_collectives_error",
      "hw_hbm_ue_error",
      "hw_nc_ue_error",
      "hw_dma_abort_error",
      "hw_repairable_hbm_ue_error",
      "execute_sw_nq_overflow",
      "execute_sw_semaphore_error",
      "execute_sw_event_error",
      "execute_sw_psum_collision",
      "execute_sw_sequencer_fatal",
  };
  return *k;
}

const std::vector<std::string>& DeviceMemCategories() {
  static const auto* const k = new std::vector<std::string>{"collectives",
                                                            "constants",
                                                            "dma_rings",
                                                            "driver_memory",
                                                            "model_code",
                                                            "model_shared_scratchpad",
                                                            "nonshared_scratchpad",
                                                            "notifications",
                                                            "runtime_memory",
                                                            "tensors",
                                                            "uncategorized"};
  return *k;
}

const std::vector<std::string>& OtherInfoCounterNames() {
  static const auto* const k =
      new std::vector<std::string>{"flop_count",       "inference_count", "model_load_count",
                                   "reset_fail_count", "reset_req_count", "nc_time_in_use"};
  return *k;
}

const std::vector<std::string>& UncorrectableErrorCounters() {
  // Repairable HBM errors are reported but do not take the device out of service.
  static const auto* const k =
      new std::vector<std::string>{"mem_ecc_uncorrected", "sram_ecc_uncorrected"};
  return *k;
}

absl::StatusOr<std::vector<int>> ListNeuronDeviceIndices(const Fs& fs) {
  return ListIndexed(fs, kNeuronClassDir, "neuron");
}

absl::StatusOr<std::vector<int>> ListNeuronCoreIndices(const Fs& fs, int index) {
  return ListIndexed(fs, NeuronDeviceDir(index), "neuron_core");
}

bool IsNeuronDriver(absl::string_view driver) {
  return driver == kNeuronPciDriver || driver == "neuron";
}

std::map<int, std::string> MapDevicesToPci(const Fs& fs, const std::vector<int>& indices,
                                           const std::vector<PciDevice>& pci) {
  std::map<int, std::string> out;
  std::vector<std::string> bound;
  for (const PciDevice& d : pci) {
    if (IsNeuronDriver(d.driver)) bound.push_back(d.address);
  }
  std::sort(bound.begin(), bound.end());
  std::vector<int> sorted = indices;
  std::sort(sorted.begin(), sorted.end());

  // 1. An explicit `device` link wins (not made by today's driver; see the header).
  std::vector<int> rest;
  for (int i : sorted) {
    auto link = fs.ReadLink(NeuronDeviceDir(i) + "/device");
    if (link.ok()) {
      const size_t slash = link->rfind('/');
      const std::string addr = slash == std::string::npos ? *link : link->substr(slash + 1);
      auto it = std::find(bound.begin(), bound.end(), addr);
      if (it != bound.end()) {
        out[i] = addr;
        bound.erase(it);
        continue;
      }
    }
    rest.push_back(i);
  }
  // 2. Rank pairing of what is left.
  if (rest.size() != bound.size()) {
    spdlog::warn("neuron device/PCI count mismatch devices={} bound_pci_functions={}", rest.size(),
                 bound.size());
  }
  for (size_t k = 0; k < rest.size() && k < bound.size(); ++k) out[rest[k]] = bound[k];
  return out;
}

}  // namespace neuron::sysfs
