// File: lib/sysfs/device_leaves.h
// The device-level sysfs nodes we read ("leaves"), found by name rather than by a hard-coded
// path.
//
// Driver 2.31.7.0 (SDK 2.33) reorganized the Neuron sysfs tree and moved several nodes; the
// list of moved nodes is in no source we can read (NEURON.md §5). So each leaf is identified by
// its file name, which the driver keeps, and located under sys/class/neuron_device/neuronN/:
//   1. the place remembered from an earlier find;
//   2. the known place: where driver 2.30.2 puts it (read in source), the table in the .cc;
//   3. a bounded walk of the device directory (depth kMaxLeafDepth, per-core neuron_coreM
//      directories and symlinks skipped), shallowest match first.
// A read that fails at the remembered place calls Forget(); the next Find searches again.
// Per-core leaves (neuron_coreM/...) are not located this way: their layout is unchanged.
//
//   DeviceLeafLocator leaves(fs);
//   if (auto p = leaves.Find(3, leaf::kCoreCount)) fs.ReadFile(*p);  // host-root relative
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lib/sysfs/fs.h"

namespace neuron::sysfs {

namespace leaf {
inline constexpr char kCoreCount[] = "core_count";  // physical cores, no trailing newline
inline constexpr char kConnectedDevices[] = "connected_devices";  // "1, 3\n"
inline constexpr char kNotifyDelay[] = "notify_delay";
inline constexpr char kSerialNumber[] = "serial_number";
inline constexpr char kArchType[] = "arch_type";            // "NDv2"
inline constexpr char kInstanceType[] = "instance_type";    // "Trn1" (a family, not EC2's name)
inline constexpr char kDeviceName[] = "device_name";        // "Trainium1"
inline constexpr char kHostMem[] = "host_mem";              // directory of host memory categories
inline constexpr char kPowerUtilization[] = "utilization";  // "status,timestamp,min,max,avg"
// Health status nodes (drivers 2.28+ when the driver's health status is enabled; 2.30.2 adds
// the last three).
inline constexpr char kHbmEccErrCount[] = "hbm_ecc_err_count";
inline constexpr char kRepairableHbmEccErrCount[] = "repairable_hbm_ecc_err_count";
inline constexpr char kSramEccErrCount[] = "sram_ecc_err_count";
inline constexpr char kHwErrorEvent[] = "hw_error_event";
inline constexpr char kUnhealthyComponents[] = "unhealthy_components";
inline constexpr char kHealthcheckHeartbeat[] = "healthcheck_heartbeat";
}  // namespace leaf

// How deep below neuronN/ a leaf is looked for (stats/hardware/health_status/x is depth 4).
inline constexpr int kMaxLeafDepth = 5;

struct DeviceLeaf {
  const char* name;   // the file (or directory) name the driver gives it
  const char* known;  // its place in driver 2.30.2, relative to neuronN/
  bool is_dir;
};

// Every leaf we read at device level: the attributes above and each stats/hardware counter
// (HardwareCounterNames()).
const std::vector<DeviceLeaf>& DeviceLeaves();
// The leaf called `name`; nullptr when it is not one of ours.
const DeviceLeaf* FindDeviceLeaf(absl::string_view name);

class DeviceLeafLocator {
 public:
  // `log_moves`: log (info) each leaf found away from its known place, once per place.
  explicit DeviceLeafLocator(const Fs& fs, bool log_moves = true) : fs_(fs), log_(log_moves) {}

  // Host-root-relative path of leaf `name` of device `index`; nullopt when the device does not
  // have it (an older driver, a disabled feature) or `name` is not a DeviceLeaves() entry.
  // Thread-safe.
  std::optional<std::string> Find(int index, absl::string_view name);
  // A read at the returned place failed: search again on the next Find.
  void Forget(int index, absl::string_view name);
  // The device is gone (or back): drop everything known about it.
  void ForgetDevice(int index);
  // Where each leaf of `index` was found so far, relative to neuronN/ (for /inventory).
  std::map<std::string, std::string> Places(int index) const;

 private:
  struct DeviceState {
    std::map<std::string, std::string, std::less<>> found;  // leaf -> path below neuronN/
    // Names seen by the last walk -> their shallowest path; valid while `walked`.
    std::map<std::string, std::string, std::less<>> walk;
    bool walked = false;
  };

  // Fills `st.walk` from a bounded walk of neuronN/ (st is an entry of devices_).
  void Walk(int index, DeviceState& st) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Fs& fs_;
  const bool log_;
  mutable absl::Mutex mu_;
  std::map<int, DeviceState> devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::sysfs
