// File: cmd/neuron-device-plugin/dra_mode.h
// --api=dra: the flags only the DRA driver reads, and running it with the flags both modes
// share (host, emulation, LNC, node, kubeconfig, intervals, metrics address).
#pragma once

#include <string>

#include "absl/synchronization/notification.h"
#include "lib/base/flags.h"
#include "lib/deviceplugin/app.h"
#include "lib/dra/dra_app.h"

namespace neuron::cmd {

// Flags only --api=dra reads that are not DraAppOptions fields.
struct DraTextFlags {
  std::string cache_dir;  // the node agent's --cache-dir; "" = claims cannot name a cache
};

void AddDraFlags(FlagSet& flags, dra::DraAppOptions& dra, DraTextFlags& text);

// Copies the shared settings from `common` into `dra` (dra.host.emulate_ultraserver is kept),
// checks them, runs the DraApp until `stop`. The process's exit code.
int RunDra(const deviceplugin::AppOptions& common, dra::DraAppOptions dra, const DraTextFlags& text,
           absl::Notification& stop);

}  // namespace neuron::cmd
