// File: cmd/neuron-scheduler-extender/main.cc
// kube-scheduler HTTP extender for AWS Neuron: topology-aware filter, prioritize, preempt and
// bind for aws.amazon.com/neuron and aws.amazon.com/neuroncore.
#include <malloc.h>

#include <cstdio>
#include <string>

#include "lib/base/fatal_signals.h"
#include "lib/base/flags.h"
#include "lib/base/logging.h"
#include "lib/base/process_init.h"
#include "lib/base/signals.h"
#include "lib/extender/app.h"
#include "lib/extender/leader_fence.h"
#include "lib/httpserver/http_server.h"
#include "spdlog/spdlog.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "neuron-scheduler-extender: %s\n", msg.c_str());
  return 2;
}

// The flags' values into `opts`, each bad one as InvalidArgument naming its flag.
absl::Status Resolve(const std::string& policy, int port, neuron::extender::AppOptions& opts) {
  auto parsed = neuron::extender::ParsePolicy(policy);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("--policy: " + std::string(parsed.status().message()));
  }
  opts.policy = *parsed;
  auto addr = neuron::httpserver::ParseListenAddress(opts.listen);
  if (!addr.ok()) {
    return absl::InvalidArgumentError("--listen: " + std::string(addr.status().message()));
  }
  if (port < 0 || port > 65535) return absl::InvalidArgumentError("--port/PORT must be 0..65535");
  if (port > 0) {
    const std::string& host = addr->first;
    opts.listen = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                  std::to_string(port);
  }
  if (opts.group_reservation_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--ultraserver-reservation-timeout must be positive");
  }
  if (opts.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  if (opts.scheduler_name.empty()) {
    return absl::InvalidArgumentError("--scheduler-name must not be empty");
  }
  if (!opts.leader_lease.empty()) {
    if (auto l = neuron::extender::ParseLeaseName(opts.leader_lease); !l.ok()) {
      return absl::InvalidArgumentError("--leader-lease: " + std::string(l.status().message()));
    }
  }
  if (!opts.metrics_listen.empty()) {
    if (auto m = neuron::httpserver::ParseListenAddress(opts.metrics_listen); !m.ok()) {
      return absl::InvalidArgumentError("--metrics-listen: " + std::string(m.status().message()));
    }
  }
  return absl::OkStatus();
}

// What the command line sets, before it is checked.
struct CommandLine {
  neuron::extender::AppOptions opts;
  std::string policy = "binpack";
  std::string log_level = "info";
  bool log_json = false;
  int port = 0;
  std::string probe;
};

void DefineFlags(neuron::FlagSet& flags, CommandLine& t) {
  flags.String(
      "listen", &t.opts.listen,
      "Address to serve kube-scheduler on (host:port). Keep it on loopback: the extender\n"
      "binds pods with its own credentials, so only the scheduler in its pod may call it.");
  flags.String("metrics-listen", &t.opts.metrics_listen,
               "Optional second address serving only /metrics, /healthz and /readyz (e.g.\n"
               "0.0.0.0:12346 for Prometheus); empty = none.");
  flags.String(
      "scheduler-name", &t.opts.scheduler_name,
      "The kube-scheduler profile (spec.schedulerName) this extender serves; /bind refuses\n"
      "pods of any other scheduler.");
  flags.String("leader-lease", &t.opts.leader_lease,
               "<namespace>/<name> of the scheduler's leader-election Lease when it runs several\n"
               "replicas: after a leader change the extender relists pods before it answers.");
  flags.String("probe", &t.probe,
               "Probe mode: GET this path (e.g. /readyz) on --listen, exit 0 on HTTP 200, else 1.\n"
               "For exec probes: the kubelet's httpGet cannot reach a loopback listener.");
  flags.Int("port", &t.port, "Port to serve on; overrides the port of --listen when set.", "PORT");
  flags.String("kubeconfig", &t.opts.kubeconfig, "Kubeconfig file; empty = in-cluster config.",
               "KUBECONFIG");
  flags.String("policy", &t.policy, "Scoring: binpack (keep large blocks free) or spread.");
  flags.Duration("reservation-ttl", &t.opts.reservation_ttl,
                 "How long a bind's choice stays reserved until the pod shows its annotation.");
  flags.Duration("ultraserver-reservation-timeout", &t.opts.group_reservation_ttl,
                 "How long an UltraServer set stays reserved for a pod group after its first\n"
                 "pod binds, when the group never completes (all pods bound ends it earlier).");
  flags.Int("threads", &t.opts.threads, "HTTP worker threads.");
  flags.String("log-level", &t.log_level, "trace, debug, info, warn, error, critical or off.");
  flags.Bool("log-json", &t.log_json, "Log one JSON object per line.");
}

}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess("neuron-scheduler-extender");
  absl::Notification& stop = neuron::ShutdownOnSignals();  // before any thread starts
  // Eight HTTP threads would each get a malloc arena that keeps its high-water mark (a full
  // Nodes request is tens of MB); two arenas keep RSS near the live set.
  mallopt(M_ARENA_MAX, 2);
  // No fastbins: each list page is a large body string allocated right after a page's worth of
  // small JSON nodes was freed, and glibc then consolidated every fastbin chunk on each page
  // (a third of cold-start CPU at 50,000 pods; 6.5 s -> 4.2 s to ready without them).
  mallopt(M_MXFAST, 0);
  neuron::FlagSet flags(
      "neuron-scheduler-extender",
      "kube-scheduler extender for AWS Neuron: filters, scores and binds pods requesting\n"
      "aws.amazon.com/neuron or aws.amazon.com/neuroncore onto topology-valid device/core sets.");
  CommandLine cl;
  DefineFlags(flags, cl);
  if (auto outcome = flags.Parse(argc, argv); outcome != neuron::FlagSet::kRun) {
    return outcome == neuron::FlagSet::kHelp ? 0 : 2;
  }
  if (absl::Status s = neuron::InitLogging("neuron-scheduler-extender", cl.log_level, cl.log_json);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::Status s = Resolve(cl.policy, cl.port, cl.opts); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (!cl.probe.empty()) {
    absl::Status s = neuron::extender::ProbeLocal(cl.opts.listen, cl.probe);
    if (!s.ok()) std::fprintf(stderr, "probe failed: %s\n", std::string(s.message()).c_str());
    return s.ok() ? 0 : 1;
  }
  neuron::extender::App app(cl.opts);
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-scheduler-extender: {}", s.ToString());
    return neuron::LoggedExit(1);
  }
  return neuron::LoggedExit(0);
}
