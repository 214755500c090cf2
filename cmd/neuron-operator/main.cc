// File: cmd/neuron-operator/main.cc
// The Neuron operator: reconciles DeviceConfigs (k8s.aws) into the driver's KMM Module, the
// device plugin, the Neuron-aware second scheduler with its extender, the node agent and the
// NFD rule, and reports status. `neuron-operator render -f FILE` prints what it would apply.
#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_split.h"
#include "cmd/neuron-operator/bundle_command.h"
#include "cmd/neuron-operator/render_command.h"
#include "lib/base/fatal_signals.h"
#include "lib/base/flags.h"
#include "lib/base/logging.h"
#include "lib/base/process_init.h"
#include "lib/base/signals.h"
#include "lib/operator/app.h"
#include "spdlog/spdlog.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "neuron-operator: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess("neuron-operator");
  if (argc > 1 && std::strcmp(argv[1], "render") == 0) {
    return neuron::op::RenderCommand(argc - 2, argv + 2);
  }
  if (argc > 1 && std::strcmp(argv[1], "bundle") == 0) {
    return neuron::op::BundleCommand(argc - 2, argv + 2);
  }
  if (argc > 1 && std::strcmp(argv[1], "catalog") == 0) {
    return neuron::op::CatalogCommand(argc - 2, argv + 2);
  }
  absl::Notification& stop = neuron::ShutdownOnSignals();  // before any thread starts
  // Each informer, worker and HTTP thread would otherwise get its own malloc arena holding its
  // high-water mark: two arenas keep an idle operator near its live set.
  mallopt(M_ARENA_MAX, 2);
  neuron::op::AppOptions opts;
  std::string log_level = "info";
  bool log_json = false;
  std::string plain_http;
  neuron::FlagSet flags(
      "neuron-operator",
      "Reconciles DeviceConfig (k8s.aws) objects into the AWS Neuron stack and reports status.\n"
      "Subcommands (each has --help): render -f deviceconfig.yaml (the objects a DeviceConfig\n"
      "makes), bundle and catalog -f manifests.yaml (OLM bundle and catalog).");
  flags.String("kubeconfig", &opts.kubeconfig, "Kubeconfig file; empty = in-cluster config.",
               "KUBECONFIG");
  flags.String("namespace", &opts.controller.settings.ns,
               "The operator's namespace (leader lease, events).", "OPERATOR_NAMESPACE");
  flags.Bool("leader-elect", &opts.leader_elect,
             "Hold a Lease so only one replica reconciles at a time.");
  flags.String("health-addr", &opts.health_addr, "Address of /healthz and /readyz.");
  flags.String("metrics-addr", &opts.metrics_addr, "Address of /metrics.");
  flags.String("node-agent-image", &opts.controller.settings.default_node_agent_image,
               "Node agent image for DeviceConfigs that name none.", "NODE_AGENT_IMAGE");
  flags.Int("workers", &opts.controller.workers, "Concurrent reconcile passes.");
  flags.Duration("resync", &opts.controller.resync,
                 "Re-run every DeviceConfig's pass this often even without events.");
  flags.String("cache-plain-http-registries", &plain_http,
               "Comma-separated host:port registries that NeuronCache tags are resolved against "
               "over plain http (tests, local mirrors); all others use https.");
  flags.String("cache-registry-ca", &opts.registry.ca_file,
               "A PEM bundle of extra CAs trusted for cache registries (beside the system's).");
  flags.String("log-level", &log_level, "trace, debug, info, warn, error, critical or off.");
  flags.Bool("log-json", &log_json, "Log one JSON object per line.");
  if (auto outcome = flags.Parse(argc, argv); outcome != neuron::FlagSet::kRun) {
    return outcome == neuron::FlagSet::kHelp ? 0 : 2;
  }
  if (absl::Status s = neuron::InitLogging("neuron-operator", log_level, log_json); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (opts.controller.settings.ns.empty()) {
    return Fail("OPERATOR_NAMESPACE (or --namespace) is required: the namespace it runs in");
  }
  if (opts.controller.workers < 1) return Fail("--workers must be at least 1");
  opts.registry.plain_http = absl::StrSplit(plain_http, ',', absl::SkipEmpty());
  neuron::op::App app(opts);
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-operator: {}", s.ToString());
    return neuron::LoggedExit(1);
  }
  return neuron::LoggedExit(0);
}
