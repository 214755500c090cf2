// File: cmd/neuron-device-plugin/main.cc
// Kubelet device plugin for AWS Neuron: aws.amazon.com/neuron (devices) and
// aws.amazon.com/neuroncore (logical NeuronCores), each on its own unix socket. With --api=dra
// it is instead the kubelet plugin of the DRA driver neuron.aws.com.
#include <cstdio>
#include <optional>
#include <string>

#include "cmd/neuron-device-plugin/dra_mode.h"
#include "lib/base/fatal_signals.h"
#include "lib/base/flags.h"
#include "lib/base/logging.h"
#include "lib/base/process_init.h"
#include "lib/base/signals.h"
#include "lib/deviceplugin/app.h"
#include "lib/httpserver/http_server.h"
#include "lib/inventory/emulation.h"
#include "lib/inventory/lnc.h"
#include "spdlog/spdlog.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "neuron-device-plugin: %s\n", msg.c_str());
  return 2;
}

// Flags read as text, turned into options by ApplyFlags.
struct TextFlags {
  std::string api = "device-plugin";
  std::string resources = "neuron,neuroncore";
  std::string numbering = "container";
  int emulate_scramble = 0;
  std::string emulate_ultraserver;
  std::optional<neuron::ultraserver::EmulatedNode> ultraserver;  // parsed by ApplyFlags
  std::string log_level = "info";
  bool log_json = false;
  neuron::cmd::DraTextFlags dra;
};

void DefineFlags(neuron::FlagSet& flags, neuron::deviceplugin::AppOptions& opts,
                 neuron::dra::DraAppOptions& dra, TextFlags& f) {
  flags.String("api", &f.api,
               "Kubelet API to serve: device-plugin (v1beta1 device plugin) or dra (kubelet "
               "plugin of the DRA driver neuron.aws.com; DRAPlugin v1 and v1beta1).");
  neuron::cmd::AddDraFlags(flags, dra, f.dra);
  flags.String("device-plugin-dir", &opts.plugin_dir,
               "Kubelet device-plugin directory (kubelet.sock and our endpoint sockets).");
  flags.String("host-root", &opts.host_root, "Where the host's / is mounted (sysfs and /dev).");
  flags.String("emulate", &opts.emulate,
               "Emulate this instance type (e.g. trn1.32xlarge) in a generated sysfs tree. Refused "
               "where <host-root>/sys/class/neuron_device shows real devices.");
  flags.String("emulate-dir", &opts.emulate_dir,
               "Directory for the emulated tree (default: a temporary directory).");
  flags.Int("emulate-scramble", &f.emulate_scramble,
            "Emulate a driver whose layout we were never told: move every device-level sysfs node "
            "to another directory, chosen from this seed (the reader finds them by name). "
            "0 = driver 2.30.2's layout.");
  flags.String(
      "emulate-ultraserver", &f.emulate_ultraserver,
      "With --emulate=trn2u.48xlarge (either --api): be node <node> (0..3) of the emulated "
      "UltraServer <name>, as <name>:<node>[:<modes>] (e.g. us-a:2; modes default "
      "1,2,4). Processes given the same name agree on its server ids; nodes 0,1 and 2,3 "
      "are the pairs.");
  flags.Int("lnc", &opts.lnc,
            "Logical NeuronCore config (1 or 2); 0 = env NEURON_LOGICAL_NC_CONFIG, else "
            "<host-root>/opt/aws/neuron/logical_nc_config, else the chip default.");
  flags.String("node-name", &opts.node_name, "This node's name; needed for the pod handshake.",
               "NODE_NAME");
  flags.String("kubeconfig", &opts.kubeconfig,
               "Kubeconfig file; empty = in-cluster config if available, else no API access.",
               "KUBECONFIG");
  flags.String("pod-resources-socket", &opts.pod_resources_socket,
               "Kubelet PodResources API socket.");
  flags.String("resources", &f.resources,
               "Resources to serve: neuron (devices) and/or neuroncore (cores), comma-separated.");
  flags.String("visible-cores-numbering", &f.numbering,
               "NEURON_RT_VISIBLE_CORES numbering: container (0-based in the container) or host.");
  flags.Duration("poll-interval", &opts.poll_interval,
                 "How often devices are fully rescanned (sysfs): attributes, cores, presence.");
  flags.Duration("health-interval", &opts.health_interval,
                 "How often only the health files (uncorrectable error counters, device dir, "
                 "PCI driver link) are read.");
  flags.Duration("healthy-after", &opts.healthy_after,
                 "Quiet period after a fault before a device is reported Healthy again.");
  flags.Duration("handshake-interval", &opts.handshake_interval,
                 "How often pod annotations are resynced with the kubelet's PodResources.");
  flags.String("metrics-listen", &opts.metrics_listen,
               "host:port serving /metrics (Prometheus), /healthz and /readyz (200 once every "
               "resource is registered with the kubelet); empty = off.");
  flags.String("log-level", &f.log_level, "trace, debug, info, warn, error, critical or off.");
  flags.Bool("log-json", &f.log_json, "Log one JSON object per line.");
}

// --emulate-ultraserver into opts (device-plugin mode) and f.ultraserver (DRA mode).
absl::Status ApplyUltraServerFlag(TextFlags& f, neuron::deviceplugin::AppOptions& opts) {
  auto node = neuron::inventory::ParseEmulateUltraServerFlag(opts.emulate, f.emulate_ultraserver);
  if (!node.ok()) return node.status();
  f.ultraserver = *node;
  opts.emulate_ultraserver = *std::move(node);
  return absl::OkStatus();
}

// The text flags checked and applied to `opts`; InvalidArgument naming the flag otherwise.
absl::Status ApplyFlags(TextFlags& f, neuron::deviceplugin::AppOptions& opts) {
  if (f.api != "device-plugin" && f.api != "dra") {
    return absl::InvalidArgumentError("--api must be device-plugin or dra, got \"" + f.api + "\"");
  }
  if (!opts.metrics_listen.empty()) {
    auto addr = neuron::httpserver::ParseListenAddress(opts.metrics_listen);
    if (!addr.ok()) {
      return absl::InvalidArgumentError("--metrics-listen: " +
                                        std::string(addr.status().message()));
    }
  }
  if (absl::Status s = neuron::inventory::ValidateLncFlag(opts.lnc); !s.ok()) return s;
  if (f.emulate_scramble < 0) {
    return absl::InvalidArgumentError("--emulate-scramble must be 0 or a positive seed");
  }
  opts.emulate_scramble = static_cast<uint64_t>(f.emulate_scramble);
  if (absl::Status s = ApplyUltraServerFlag(f, opts); !s.ok()) return s;
  if (f.api == "dra") return absl::OkStatus();  // the DRA flags are checked by RunDra
  auto parsed = neuron::assignment::ParseResourceList(f.resources);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("--resources: " + std::string(parsed.status().message()));
  }
  opts.resources = *parsed;
  if (f.numbering == "host") {
    opts.numbering = neuron::deviceplugin::CoreNumbering::kHost;
  } else if (f.numbering != "container") {
    return absl::InvalidArgumentError(
        "--visible-cores-numbering must be container or host, got \"" + f.numbering + "\"");
  }
  if (opts.plugin_dir.empty()) {
    return absl::InvalidArgumentError("--device-plugin-dir must not be empty");
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess("neuron-device-plugin");
  absl::Notification& stop = neuron::ShutdownOnSignals();  // before any thread starts
  neuron::deviceplugin::AppOptions opts;
  neuron::dra::DraAppOptions dra_opts;
  TextFlags text;
  neuron::FlagSet flags(
      "neuron-device-plugin",
      "Kubelet device plugin (API v1beta1) for AWS Neuron: advertises aws.amazon.com/neuron "
      "(devices) and\naws.amazon.com/neuroncore (logical NeuronCores) with health and NUMA "
      "topology, allocates topology-aware\nsets, and re-registers when the kubelet restarts. "
      "Serves Prometheus /metrics on --metrics-listen.\nWith --api=dra: the kubelet plugin of the "
      "DRA driver neuron.aws.com instead (registration + "
      "DRAPlugin v1/v1beta1).");
  DefineFlags(flags, opts, dra_opts, text);
  if (auto outcome = flags.Parse(argc, argv); outcome != neuron::FlagSet::kRun) {
    return outcome == neuron::FlagSet::kHelp ? 0 : 2;
  }
  if (absl::Status s = neuron::InitLogging("neuron-device-plugin", text.log_level, text.log_json);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::Status s = ApplyFlags(text, opts); !s.ok()) return Fail(std::string(s.message()));
  neuron::WatchUnexpectedExit();
  if (text.api == "dra") {
    dra_opts.host.emulate_ultraserver = text.ultraserver;
    return neuron::LoggedExit(neuron::cmd::RunDra(opts, std::move(dra_opts), text.dra, stop));
  }
  neuron::deviceplugin::App app(opts);
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-device-plugin: {}", s.ToString());
    return neuron::LoggedExit(1);
  }
  return neuron::LoggedExit(0);
}
