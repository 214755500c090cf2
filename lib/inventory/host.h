// File: lib/inventory/host.h
// The host a node process watches, as the device plugin and the DRA driver both open it: the
// real sysfs under --host-root, or an emulated tree of --emulate's shape (emulation.h); an Fs
// rooted there and a Watcher over it, polled once, with LNC resolved as lnc.h says.
//
//   absl::StatusOr<std::unique_ptr<WatchedHost>> host = OpenHost(opts);
//   std::thread t([&] { (*host)->watcher->Run(stop); });
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/inventory/watcher.h"
#include "lib/sysfs/fs.h"
#include "lib/ultraserver/emulation.h"

namespace neuron::inventory {

// What emulated mode hands the runtime as every device's host path: the emulated tree's /dev
// does not exist where the runtime opens device nodes (the host).
inline constexpr char kEmulatedDeviceNode[] = "/dev/null";

struct HostOptions {
  std::string host_root = "/";
  std::string emulate;            // instance type; "" = real hardware under host_root
  std::string emulate_dir;        // where to write the emulated tree ("" = a new temp dir)
  uint64_t emulate_scramble = 0;  // sysfs::EmulationSpec::scramble_seed
  int lnc = 0;  // --lnc (0 = env NEURON_LOGICAL_NC_CONFIG, host file, family default)
  std::string node_name;
  absl::Duration poll_interval = absl::Seconds(5);          // full rescan
  absl::Duration health_interval = absl::Milliseconds(50);  // health fast path; 0 = off
  absl::Duration healthy_after = absl::Seconds(30);         // quiet period before healthy again
  // --emulate-ultraserver: the emulated host is this node of an UltraServer (emulate must be
  // kUltraServerShape, emulation.h). Last, with a default, so positional initializers still fit.
  std::optional<ultraserver::EmulatedNode> emulate_ultraserver = {};
};

struct WatchedHost {
  WatchedHost() = default;
  WatchedHost(const WatchedHost&) = delete;
  WatchedHost& operator=(const WatchedHost&) = delete;
  // Removes the emulated tree when it is a temporary one OpenHost made (it may be on a tmpfs,
  // i.e. memory).
  ~WatchedHost();

  std::string root;  // the host root in use (the emulated tree's root when emulating)
  std::unique_ptr<sysfs::Fs> fs;
  std::unique_ptr<Watcher> watcher;  // polled once already
  bool owns_root = false;            // root is a temporary emulated tree (no --emulate-dir)
};

// OK unless `host_root` shows real Neuron devices (sys/class/neuron_device): emulating there
// would hide them (FailedPrecondition, saying so). OpenHost checks it before emulating.
absl::Status CheckNoRealDevices(const std::string& host_root);

// Writes the emulated tree when asked, opens the Fs, builds the watcher and polls once (logging
// the inventory). InvalidArgument when an explicit --lnc does not fit the chips; the emulation
// errors (NotFound for an unknown instance type).
absl::StatusOr<std::unique_ptr<WatchedHost>> OpenHost(const HostOptions& opts);

// OK when kEmulatedDeviceNode is a character device here (emulated mode maps /dev/neuronN to
// it); FailedPrecondition otherwise.
absl::Status CheckEmulatedDeviceNode();

}  // namespace neuron::inventory
