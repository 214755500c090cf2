// File: tests/fakes/kubelet/fake_podresources_main.cc
// The fake kubelet's PodResources v1 server (List, GetAllocatableResources) as a process, for
// tests that drive real binaries from a script (tests/monitoring/evaluate_with_prometheus.py):
//
//   neuron_fake_podresources --pods=FILE
//
// FILE holds a ListPodResourcesResponse in protobuf's JSON mapping (the field names of
// proto/podresources/v1/api.proto, e.g. {"podResources": [{"name": ..., "namespace": ...,
// "containers": [{"name": ..., "devices": [...], "dynamicResources": [...]}]}]}). It is read
// again whenever it changes, so a script adds and removes pods by rewriting it. The socket's path
// is the first line on stdout. SIGTERM or SIGINT stops it.
#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/signals.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace {

namespace fs = std::filesystem;

// The file's pods, or an error naming the file and what was wrong with it.
absl::Status Load(const std::string& path, neuron::fakes::FakeKubelet& kubelet) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  v1::ListPodResourcesResponse resp;
  const auto s = google::protobuf::util::JsonStringToMessage(text.str(), &resp);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        path + ": not a ListPodResourcesResponse: " + std::string(s.message()));
  }
  kubelet.SetPodResources(resp);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::Notification& shutdown = neuron::ShutdownOnSignals();
  const std::string prefix = "--pods=";
  if (argc != 2 || std::string(argv[1]).rfind(prefix, 0) != 0) {
    std::fprintf(stderr, "usage: neuron_fake_podresources --pods=FILE\n");
    return 2;
  }
  const std::string pods = std::string(argv[1]).substr(prefix.size());
  neuron::fakes::FakeKubelet kubelet;
  if (absl::Status s = Load(pods, kubelet); !s.ok()) {
    std::fprintf(stderr, "neuron_fake_podresources: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (absl::Status s = kubelet.StartPodResources(); !s.ok()) {
    std::fprintf(stderr, "neuron_fake_podresources: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%s\n", kubelet.pod_resources_socket().c_str());
  std::fflush(stdout);
  std::error_code ec;
  fs::file_time_type seen = fs::last_write_time(pods, ec);
  while (!shutdown.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
    const fs::file_time_type now = fs::last_write_time(pods, ec);
    if (ec || now == seen) continue;
    seen = now;
    // A bad rewrite keeps the last good pods, as a kubelet keeps serving what it knows.
    if (absl::Status s = Load(pods, kubelet); !s.ok()) {
      std::fprintf(stderr, "neuron_fake_podresources: %s\n", std::string(s.message()).c_str());
    }
  }
  return 0;
}
