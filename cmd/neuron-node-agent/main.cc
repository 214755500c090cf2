// neuron-node-agent: Neuron device inventory, Prometheus metrics and NFD labels for one node;
// AWS's UltraServer labels on its own Node through the API.
#include <malloc.h>

#include <cstdio>

#include "absl/strings/str_split.h"
#include "lib/agent/app.h"
#include "lib/agent/pod_attribution_source.h"
#include "lib/base/clock.h"
#include "lib/base/env.h"
#include "lib/base/fatal_signals.h"
#include "lib/base/flags.h"
#include "lib/base/logging.h"
#include "lib/base/process_init.h"
#include "lib/base/signals.h"
#include "lib/inventory/emulation.h"
#include "lib/inventory/lnc.h"
#include "spdlog/spdlog.h"

// Long on purpose: flag declarations (each one line of --help), then checks and Run.
int main(int argc, char** argv) {
  neuron::InitProcess("neuron-node-agent");
  absl::Notification& shutdown = neuron::ShutdownOnSignals();  // before any thread starts
  // One malloc arena: the agent is low-concurrency, and per-thread arenas holding freed
  // /metrics pages would otherwise double its resident memory (see bench/README.md).
  mallopt(M_ARENA_MAX, 1);
  // A fixed mmap threshold: blocks over 128 KiB (a render's text, an inflated /metrics page) are
  // mapped and unmapped on free. Left dynamic, glibc raises the threshold after the first such
  // free and keeps the later ones on the heap.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  neuron::agent::AgentOptions opts;
  opts.pod_resources_socket = neuron::agent::kPodResourcesSocketUnderKubeletDir;
  opts.listen = "0.0.0.0:" + neuron::EnvOr("PORT", "8000");
  std::string log_level = "info";
  bool log_json = false;
  int emulate_scramble = 0;
  std::string emulate_ultraserver;
  std::string plain_http;
  int cache_max_gib = 8;

  neuron::FlagSet flags(
      "neuron-node-agent",
      "Reads the node's AWS Neuron devices (PCI vendor 1d0f, Neuron driver sysfs), "
      "serves /metrics, /inventory,\n/healthz and /readyz, and publishes node labels "
      "through NFD's local feature source. On an UltraServer node\nit also labels its own Node "
      "with AWS's neuron.amazonaws.com/ultraserver-* labels (needs nodes get,patch).");
  flags.String("host-root", &opts.host_root,
               "Where the host's / is mounted; sysfs is read below it.");
  flags.String("emulate", &opts.emulate,
               "Emulate this instance type (e.g. trn1.32xlarge) instead of reading real hardware. "
               "Refused where <host-root>/sys/class/neuron_device shows real devices.");
  flags.String("emulate-dir", &opts.emulate_dir,
               "Directory for the emulated sysfs tree (kept; write into it to inject faults). "
               "Default: a temporary directory removed on exit.");
  flags.Int("lnc", &opts.lnc,
            "Logical NeuronCore config (1 or 2); 0 = env NEURON_LOGICAL_NC_CONFIG, else "
            "<host-root>/opt/aws/neuron/logical_nc_config, else the chip default.");
  flags.Int("emulate-scramble", &emulate_scramble,
            "Emulate a driver whose layout we were never told: move every device-level sysfs node "
            "to another directory, chosen from this seed (the reader finds them by name). "
            "0 = driver 2.30.2's layout.");
  flags.String("emulate-ultraserver", &emulate_ultraserver,
               "With --emulate=trn2u.48xlarge: be node <node> (0..3) of the emulated UltraServer "
               "<name>, as <name>:<node>[:<modes>] (e.g. us-a:2; modes default 1,2,4). Agents "
               "given the same name agree on its server ids; nodes 0,1 and 2,3 are the pairs.");
  flags.String("listen", &opts.listen, "HTTP listen address host:port (PORT sets the port).");
  flags.String(
      "node-name", &opts.node_name,
      "Kubernetes node name, reported in /inventory; the Node the UltraServer labels go on.",
      "NODE_NAME");
  flags.String(
      "features-dir", &opts.features_dir,
      "NFD local features directory (e.g. /etc/kubernetes/node-feature-discovery/features.d); "
      "empty disables labels.");
  flags.Bool("ultraserver-labels", &opts.ultraserver_labels,
             "Put AWS's UltraServer labels (neuron.amazonaws.com/ultraserver-mode, -server-id-2/4, "
             "-node-id-2/4) on this node's Node object, and remove them when the driver shows "
             "none. Needs --node-name and API access.");
  flags.String("kubeconfig", &opts.kubeconfig,
               "Kubeconfig file; empty = in-cluster config if available, else no API access "
               "(no UltraServer labels).",
               "KUBECONFIG");
  flags.Duration("interval", &opts.interval, "How often sysfs is fully rescanned.");
  flags.Duration("health-interval", &opts.health_interval,
                 "How often only the health files (uncorrectable error counters, device dir, "
                 "PCI driver link) are read.");
  flags.Duration("healthy-after", &opts.healthy_after,
                 "Quiet period after which an unhealthy device is healthy again.");
  flags.String("cache-dir", &opts.cache.cache_dir,
               "Compiled-model caches (NeuronCache, ClusterNeuronCache): the host directory where "
               "this node keeps extracted cache images (e.g. /var/lib/neuron/cache). Empty = "
               "caches off. Needs --node-name and API access.");
  flags.Bool("csi", &opts.cache.csi,
             "With --cache-dir: serve the CSI node driver cache.neuron.aws.com that mounts a cache "
             "into pods (registered with the kubelet under --kubelet-dir).");
  flags.String("kubelet-dir", &opts.cache.kubelet_dir,
               "The kubelet's root directory (plugins/, plugins_registry/, pods/).");
  flags.String("pod-resources-socket", &opts.pod_resources_socket,
               "The kubelet's PodResources socket (as this container sees it, like --kubelet-dir), "
               "asked every --interval which pod holds each NeuronCore: the "
               "neuron_core_allocation series. Empty = off.");
  flags.String("csi-host-plugins-dir", &opts.cache.host_plugins_dir,
               "<kubelet-dir>/plugins as the kubelet sees it, when this container mounts it "
               "elsewhere; empty = the same path.");
  flags.String("operator-namespace", &opts.cache.operator_namespace,
               "Where ClusterNeuronCache pull secrets live (the operator's namespace).",
               "OPERATOR_NAMESPACE");
  flags.String("cache-plain-http-registries", &plain_http,
               "Comma-separated host:port registries pulled over plain http (tests, local "
               "mirrors); all others use https.");
  flags.String("cache-registry-ca", &opts.cache.registry_ca_file,
               "A PEM bundle of extra CAs trusted for cache registries (beside the system's).");
  flags.Int("cache-max-gib", &cache_max_gib,
            "Largest cache image (extracted bytes, GiB) this node accepts; larger ones fail with "
            "a clear status.");
  flags.Duration("cache-stall-timeout", &opts.cache.stall_timeout,
                 "A registry that sends no byte for this long fails the pull (retried later).");
  flags.String("log-level", &log_level, "trace, debug, info, warn, error, critical or off.");
  flags.Bool("log-json", &log_json, "Log one JSON object per line.");
  if (auto outcome = flags.Parse(argc, argv); outcome != neuron::FlagSet::kRun) {
    return outcome == neuron::FlagSet::kHelp ? 0 : 2;
  }
  opts.pod_resources_socket =
      neuron::agent::ResolvePodResourcesSocket(opts.pod_resources_socket, opts.cache.kubelet_dir);
  if (absl::Status s = neuron::InitLogging("neuron-node-agent", log_level, log_json); !s.ok()) {
    std::fprintf(stderr, "neuron-node-agent: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::Status s = neuron::inventory::ValidateLncFlag(opts.lnc); !s.ok()) {
    std::fprintf(stderr, "neuron-node-agent: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (emulate_scramble < 0) {
    std::fprintf(stderr, "neuron-node-agent: --emulate-scramble must be 0 or a positive seed\n");
    return 2;
  }
  opts.emulate_scramble = static_cast<uint64_t>(emulate_scramble);
  if (cache_max_gib <= 0) {
    std::fprintf(stderr, "neuron-node-agent: --cache-max-gib must be positive\n");
    return 2;
  }
  opts.cache.max_bytes = static_cast<uint64_t>(cache_max_gib) << 30;
  opts.cache.plain_http_registries = absl::StrSplit(plain_http, ',', absl::SkipEmpty());
  auto ultraserver =
      neuron::inventory::ParseEmulateUltraServerFlag(opts.emulate, emulate_ultraserver);
  if (!ultraserver.ok()) {
    std::fprintf(stderr, "neuron-node-agent: %s\n",
                 std::string(ultraserver.status().message()).c_str());
    return 2;
  }
  opts.emulate_ultraserver = *std::move(ultraserver);
  neuron::agent::App app(opts, neuron::Clock::Real());
  if (absl::Status s = app.Run(shutdown); !s.ok()) {
    spdlog::critical("neuron-node-agent failed: {}", s.ToString());
    return neuron::LoggedExit(1);
  }
  return neuron::LoggedExit(0);
}
