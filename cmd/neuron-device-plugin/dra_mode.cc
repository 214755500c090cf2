// File: cmd/neuron-device-plugin/dra_mode.cc
#include "cmd/neuron-device-plugin/dra_mode.h"

#include <malloc.h>

#include <cstdio>

#include "lib/cache/cache_store.h"
#include "lib/csi/claim_cache_mounts.h"
#include "lib/csi/mounter.h"
#include "spdlog/spdlog.h"

namespace neuron::cmd {

void AddDraFlags(FlagSet& flags, dra::DraAppOptions& dra, DraTextFlags& text) {
  flags.String("cache-dir", &text.cache_dir,
               "--api=dra: the node agent's --cache-dir (compiled-model caches). A claim whose "
               "NeuronConfig names a compileCache gets a private writable view of it, "
               "bind-mounted through CDI; empty = such claims fail with a clear message.");
  flags.String("kubelet-registrar-dir", &dra.plugin.registrar_dir,
               "--api=dra: the kubelet's plugin registration directory (we create "
               "neuron.aws.com-reg.sock there).",
               "KUBELET_REGISTRAR_DIRECTORY_PATH");
  flags.String("kubelet-plugins-dir", &dra.plugin.plugins_dir,
               "--api=dra: the kubelet's plugins directory (we serve "
               "neuron.aws.com/dra.sock there).",
               "KUBELET_PLUGINS_DIRECTORY_PATH");
  flags.String("kubelet-plugins-host-dir", &dra.plugin.host_plugins_dir,
               "--api=dra: --kubelet-plugins-dir as the kubelet sees it on the host, when "
               "mounted elsewhere in this container; empty = the same path.");
  flags.String("cdi-root", &dra.cdi_root, "--api=dra: where CDI spec files are written.",
               "CDI_ROOT");
  flags.String("dra-state-dir", &dra.state_dir,
               "--api=dra: directory of the prepared-claims checkpoint (checkpoint.json).");
  flags.Bool("dra-partitionable-devices", &dra.partitionable,
             "--api=dra: also publish each device's NeuronCores as partitions (needs the "
             "DRAPartitionableDevices feature gate); off = whole devices only.");
  flags.Bool("dra-device-taints", &dra.device_taints,
             "--api=dra: publish unhealthy devices with a neuron.aws.com/unhealthy taint (needs "
             "the DRADeviceTaints feature gate); off = unhealthy devices leave the slice.");
}

int RunDra(const deviceplugin::AppOptions& common, dra::DraAppOptions dra, const DraTextFlags& text,
           absl::Notification& stop) {
  if (dra.plugin.registrar_dir.empty() || dra.plugin.plugins_dir.empty()) {
    std::fprintf(stderr, "neuron-device-plugin: %s\n",
                 "--kubelet-registrar-dir and --kubelet-plugins-dir must not be empty");
    return 2;
  }
  // One malloc arena: gRPC, HTTP and watcher threads otherwise each keep a 64 MiB-reserved
  // arena with pages resident (the node agent does the same).
  mallopt(M_ARENA_MAX, 1);
  auto ultraserver = std::move(dra.host.emulate_ultraserver);  // set by main from its flag
  dra.host = {common.host_root,    common.emulate,   common.emulate_dir,   common.emulate_scramble,
              common.lnc,          common.node_name, common.poll_interval, common.health_interval,
              common.healthy_after};
  dra.host.emulate_ultraserver = std::move(ultraserver);
  dra.kubeconfig = common.kubeconfig;
  dra.metrics_listen = common.metrics_listen;
  // Compile caches: the agent fills the store; this process only reads it and mounts views.
  std::unique_ptr<cache::CacheStore> store;
  std::unique_ptr<csi::Mounter> mounter;
  std::unique_ptr<csi::ClaimCacheMounts> caches;
  if (!text.cache_dir.empty()) {
    store = std::make_unique<cache::CacheStore>(text.cache_dir);
    mounter = csi::DetectMounter(text.cache_dir + "/claims");
    caches = std::make_unique<csi::ClaimCacheMounts>(*store, *mounter);
    dra.cache_mounts = caches.get();
    spdlog::info("compile caches for claims from dir={} mounter={}", text.cache_dir,
                 mounter->name());
  }
  dra::DraApp app(std::move(dra));
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-device-plugin: {}", s.ToString());
    return 1;
  }
  return 0;
}

}  // namespace neuron::cmd
