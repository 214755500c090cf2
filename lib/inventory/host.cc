// File: lib/inventory/host.cc
#include "lib/inventory/host.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lib/base/clock.h"
#include "lib/inventory/emulation.h"
#include "lib/sysfs/neuron_driver.h"

namespace neuron::inventory {

absl::Status CheckNoRealDevices(const std::string& host_root) {
  const std::unique_ptr<sysfs::Fs> fs = sysfs::MakeRootedFs(host_root);
  absl::StatusOr<std::vector<int>> real = sysfs::ListNeuronDeviceIndices(*fs);
  if (!real.ok() || real->empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "this node has ", real->size(), " real Neuron device(s) (", host_root,
      "/sys/class/neuron_device): emulation is refused here, it would hide them; run without "
      "--emulate (or keep emulated DeviceConfigs off Neuron nodes with spec.selector)"));
}

WatchedHost::~WatchedHost() {
  watcher.reset();
  fs.reset();
  if (!owns_root) return;
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  if (ec) spdlog::warn("removing emulated tree root={} error={}", root, ec.message());
}

absl::StatusOr<std::unique_ptr<WatchedHost>> OpenHost(const HostOptions& opts) {
  auto host = std::make_unique<WatchedHost>();
  host->root = opts.host_root;
  if (opts.emulate_ultraserver && opts.emulate.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--emulate-ultraserver needs --emulate=", kUltraServerShape));
  }
  if (!opts.emulate.empty()) {
    if (absl::Status s = CheckNoRealDevices(opts.host_root); !s.ok()) return s;
    absl::StatusOr<std::string> r = PrepareEmulation(
        opts.emulate, opts.emulate_dir, opts.lnc, opts.emulate_scramble, opts.emulate_ultraserver);
    if (!r.ok()) return r.status();
    host->root = *r;
    host->owns_root = opts.emulate_dir.empty();
    spdlog::info("emulating instance_type={} root={}", opts.emulate, host->root);
  }
  host->fs = sysfs::MakeRootedFs(host->root);
  WatcherOptions wopts;
  wopts.interval = opts.poll_interval;
  wopts.health_interval = opts.health_interval;
  wopts.healthy_after = opts.healthy_after;
  wopts.scan.node_name = opts.node_name;
  wopts.scan.instance_type = opts.emulate;
  wopts.scan.lnc = LncInputs::FromEnvironment(opts.lnc);
  host->watcher = std::make_unique<Watcher>(*host->fs, Clock::Real(), wopts);
  host->watcher->Poll();
  const Inventory inv = host->watcher->Current();
  // A bad --lnc is a startup error; a bad env/file value is logged by the scanner and only
  // withholds logical core counts until it is readable.
  if (opts.lnc != 0 && !inv.lnc_error.empty()) return absl::InvalidArgumentError(inv.lnc_error);
  spdlog::info(
      "inventory devices={} cores={} physical_cores={} lnc={} lnc_source={} instance_type={} "
      "driver_version={}",
      inv.devices.size(), inv.total_cores, inv.total_physical_cores, inv.lnc, inv.lnc_origin,
      inv.instance_type, inv.driver_version.empty() ? "unknown" : inv.driver_version);
  return host;
}

absl::Status CheckEmulatedDeviceNode() {
  struct stat st {};
  if (::lstat(kEmulatedDeviceNode, &st) != 0 || !S_ISCHR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("emulated mode maps ", kEmulatedDeviceNode,
                                                      " to /dev/neuronN, but it is not a "
                                                      "character device here"));
  }
  return absl::OkStatus();
}

}  // namespace neuron::inventory
