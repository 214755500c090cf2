// File: cmd/neuron-device-plugin/main.cc
// Kubelet device plugin for AWS Neuron: aws.amazon.com/neuron (devices) and
// aws.amazon.com/neuroncore (logical NeuronCores), each on its own unix socket.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "lib/base/env.h"
#include "lib/base/logging.h"
#include "lib/base/signals.h"
#include "lib/deviceplugin/app.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, device_plugin_dir, "/var/lib/kubelet/device-plugins",
          "Kubelet device-plugin directory (kubelet.sock and our endpoint sockets)");
ABSL_FLAG(std::string, host_root, "/", "Root of the host filesystem (sysfs and /dev) to read");
ABSL_FLAG(std::string, emulate, "",
          "Emulate this instance type (e.g. trn1.32xlarge) in a generated sysfs tree");
ABSL_FLAG(std::string, emulate_dir, "", "Directory for the emulated tree (default: a temp dir)");
ABSL_FLAG(std::string, node_name, neuron::EnvOr("NODE_NAME", ""),
          "This node's name (env NODE_NAME); needed for the pod handshake");
ABSL_FLAG(std::string, kubeconfig, neuron::EnvOr("KUBECONFIG", ""),
          "Kubeconfig file (env KUBECONFIG); default in-cluster config, else no API access");
ABSL_FLAG(std::string, pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock",
          "Kubelet PodResources API socket");
ABSL_FLAG(std::string, resources, "neuron,neuroncore",
          "Resources to serve: neuron (devices) and/or neuroncore (cores)");
ABSL_FLAG(std::string, visible_cores_numbering, "container",
          "NEURON_RT_VISIBLE_CORES numbering: container (0-based in the container) or host");
ABSL_FLAG(absl::Duration, poll_interval, absl::Seconds(5),
          "How often to rescan the devices (sysfs) for health and presence");
ABSL_FLAG(absl::Duration, handshake_interval, absl::Seconds(10),
          "How often to resync pod annotations with the kubelet's PodResources");
ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn, error, critical or off");

namespace {

// Abseil flag names are identifiers; accept the kubelet-style spelling --device-plugin-dir too.
std::vector<char*> DashesToUnderscores(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (size_t i = 1; i < storage.size(); ++i) {
    std::string& a = storage[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    const size_t end = std::min(a.find('='), a.size());
    for (size_t j = 2; j < end; ++j) {
      if (a[j] == '-') a[j] = '_';
    }
  }
  std::vector<char*> out;
  for (std::string& a : storage) out.push_back(a.data());
  return out;
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "neuron-device-plugin: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::Notification& stop = neuron::ShutdownOnSignals();
  absl::SetProgramUsageMessage(
      "Kubelet device plugin for AWS Neuron devices and NeuronCores.\n"
      "  neuron-device-plugin [--emulate=trn1.32xlarge] [--resources=neuron,neuroncore] ...\n"
      "Flag names may be written with dashes or underscores (--device-plugin-dir).");
  std::vector<std::string> storage;
  std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (absl::Status s = neuron::InitLogging("neuron-device-plugin", absl::GetFlag(FLAGS_log_level));
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  neuron::deviceplugin::AppOptions opts;
  opts.plugin_dir = absl::GetFlag(FLAGS_device_plugin_dir);
  opts.host_root = absl::GetFlag(FLAGS_host_root);
  opts.emulate = absl::GetFlag(FLAGS_emulate);
  opts.emulate_dir = absl::GetFlag(FLAGS_emulate_dir);
  opts.node_name = absl::GetFlag(FLAGS_node_name);
  opts.kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  opts.pod_resources_socket = absl::GetFlag(FLAGS_pod_resources_socket);
  opts.poll_interval = absl::GetFlag(FLAGS_poll_interval);
  opts.handshake_interval = absl::GetFlag(FLAGS_handshake_interval);
  if (opts.poll_interval <= absl::ZeroDuration() ||
      opts.handshake_interval <= absl::ZeroDuration()) {
    return Fail("--poll-interval and --handshake-interval must be positive");
  }
  auto resources = neuron::deviceplugin::ParseResourceList(absl::GetFlag(FLAGS_resources));
  if (!resources.ok()) return Fail("--resources: " + std::string(resources.status().message()));
  opts.resources = *resources;
  const std::string numbering = absl::GetFlag(FLAGS_visible_cores_numbering);
  if (numbering == "host") {
    opts.numbering = neuron::deviceplugin::CoreNumbering::kHost;
  } else if (numbering != "container") {
    return Fail("--visible-cores-numbering must be container or host, got \"" + numbering + "\"");
  }
  if (opts.plugin_dir.empty()) return Fail("--device-plugin-dir must not be empty");
  neuron::deviceplugin::App app(opts);
  if (absl::Status s = app.Run(stop); !s.ok()) {
    spdlog::critical("neuron-device-plugin: {}", s.ToString());
    return 1;
  }
  return 0;
}
