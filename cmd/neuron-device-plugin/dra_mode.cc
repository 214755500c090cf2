// File: cmd/neuron-device-plugin/dra_mode.cc
#include "cmd/neuron-device-plugin/dra_mode.h"

#include <malloc.h>

#include <cstdio>

#include "spdlog/spdlog.h"

namespace neuron::cmd {

void AddDraFlags(FlagSet& flags, dra::DraAppOptions& dra) {
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

int RunDra(const deviceplugin::AppOptions& common, dra::DraAppOptions dra,
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
  dra::DraApp app(std::move(dra));
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-device-plugin: {}", s.ToString());
    return 1;
  }
  return 0;
}

}  // namespace neuron::cmd
