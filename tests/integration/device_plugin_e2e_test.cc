// File: tests/integration/device_plugin_e2e_test.cc
// The real neuron-device-plugin binary on an emulated trn1.32xlarge (tree on tmpfs), against the
// fake kubelet (registration, ListAndWatch, GetPreferredAllocation, Allocate, PodResources, the
// runtime's device check) and an in-process fake kube-apiserver reached through a kubeconfig:
// registration of both resources, device counts, the extender's hint, Allocate's device specs
// and env, the pod handshake, neuron/neuroncore overlap refused, an ECC fault turning a device
// Unhealthy (health fast path), a clean SIGTERM exit, and a restarted plugin learning holdings
// from PodResources.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron {
namespace {

using nlohmann::json;
using testing::BinaryPath;
using testing::Eventually;
using testing::Subprocess;

constexpr absl::Duration kPluginWait = absl::Seconds(30);
constexpr char kDevices[] = "aws.amazon.com/neuron";
constexpr char kCores[] = "aws.amazon.com/neuroncore";
constexpr char kNode[] = "e2e-node";

// A directory on tmpfs when there is one (the emulated tree has thousands of small files).
struct PluginTempDir {
  PluginTempDir() {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string t = std::string(base) + "/ndp-e2e-XXXXXX";
    if (mkdtemp(t.data()) != nullptr) path = t;
  }
  ~PluginTempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

int Healthy(const v1beta1::ListAndWatchResponse& r) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == "Healthy";
  return n;
}

std::string Health(const v1beta1::ListAndWatchResponse& r, const std::string& id) {
  for (const auto& d : r.devices()) {
    if (d.id() == id) return d.health();
  }
  return "";
}

// Prints the plugin's log when a REQUIRE fails (the test is unwinding).
struct LogOnFailure {
  const Subprocess& plugin;
  ~LogOnFailure() {
    if (std::uncaught_exceptions() > 0) std::fprintf(stderr, "%s\n", plugin.Log().c_str());
  }
};

void WritePluginKubeconfig(const std::string& path, const std::string& server) {
  std::ofstream f(path);
  f << "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
    << "clusters:\n- name: fake\n  cluster:\n    server: " << server << "\n"
    << "users:\n- name: plugin\n  user:\n    token: e2e-token\n"
    << "contexts:\n- name: e2e\n  context:\n    cluster: fake\n    user: plugin\n"
    << "    namespace: default\n";
}

TEST_CASE("neuron-device-plugin binary end to end", "[e2e]") {
  PluginTempDir tmp;
  REQUIRE_FALSE(tmp.path.empty());
  const std::string emulated = tmp.path + "/host";

  fakes::FakeApiServer api;
  REQUIRE(api.Start().ok());
  const std::string kubeconfig = tmp.path + "/kubeconfig";
  WritePluginKubeconfig(kubeconfig, api.url());
  // A pod the scheduler extender bound to this node and annotated.
  const std::string pod_path = "/api/v1/namespaces/ml/pods/train";
  const std::string ovn = R"({"default":{"ip_addresses":["10.128.2.17/23"]}})";
  REQUIRE(api.Put(pod_path, {{"apiVersion", "v1"},
                             {"kind", "Pod"},
                             {"metadata",
                              {{"name", "train"},
                               {"namespace", "ml"},
                               {"annotations",
                                {{"AWS_NEURON_IDS", "4,5"},
                                 {"NEURON_RESOURCE_TYPE", "neuroncore"},
                                 {"NEURON_ALLOCATED", "false"},
                                 {"NEURON_ALLOC_TIME", "1700000000000000000"},
                                 {"k8s.ovn.org/pod-networks", ovn}}}}},
                             {"spec",
                              {{"nodeName", kNode},
                               {"containers",
                                {{{"name", "main"},
                                  {"image", "trainer:1"},
                                  {"resources", {{"limits", {{kCores, "2"}}}}}}}}}}})
              .ok());

  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());

  Subprocess plugin({BinaryPath("neuron-device-plugin"), "--emulate=trn1.32xlarge",
                     "--emulate-dir=" + emulated, "--device-plugin-dir=" + kubelet.dir(),
                     "--kubeconfig=" + kubeconfig, "--node-name=" + std::string(kNode),
                     "--pod-resources-socket=" + kubelet.pod_resources_socket(),
                     "--poll-interval=1h", "--health-interval=50ms", "--handshake-interval=1s"},
                    tmp.path + "/plugin.log");
  REQUIRE(plugin.started());
  const LogOnFailure dump{plugin};

  // Registration of both resources.
  REQUIRE(kubelet.WaitForRegistrations(2, kPluginWait));
  std::set<std::string> registered;
  for (const auto& r : kubelet.registrations()) {
    CHECK(r.version() == "v1beta1");
    CHECK(r.options().get_preferred_allocation_available());
    registered.insert(r.resource_name());
  }
  CHECK(registered == std::set<std::string>{kDevices, kCores});

  // ListAndWatch: 16 devices, 32 cores, all healthy.
  REQUIRE(kubelet.WaitForDevices(
      kDevices, [](const auto& r) { return r.devices_size() == 16 && Healthy(r) == 16; },
      kPluginWait));
  REQUIRE(kubelet.WaitForDevices(
      kCores, [](const auto& r) { return r.devices_size() == 32 && Healthy(r) == 32; },
      kPluginWait));

  // GetPreferredAllocation follows the extender's annotation (read from the pod cache).
  v1beta1::PreferredAllocationRequest pref;
  auto* pc = pref.add_container_requests();
  for (int i = 0; i < 32; ++i) pc->add_available_deviceids(std::to_string(i));
  pc->set_allocation_size(2);
  std::vector<std::string> hinted;
  REQUIRE(Eventually(
      [&] {
        auto resp = kubelet.GetPreferredAllocation(kCores, pref);
        if (!resp.ok() || resp->container_responses_size() != 1) return false;
        const auto& ids = resp->container_responses(0).deviceids();
        hinted.assign(ids.begin(), ids.end());
        return hinted == std::vector<std::string>{"4", "5"};
      },
      kPluginWait));

  // A pod admitted for a device set: /dev/neuronN specs whose host path (the host's /dev/null
  // in emulated mode) passes the runtime's check, and 0-based cores.
  auto alloc = kubelet.AllocateFor({"ml", "infer", "main"}, kDevices, {"8", "9", "10", "11"});
  REQUIRE(alloc.ok());
  REQUIRE(alloc->container_responses_size() == 1);
  const auto& cr = alloc->container_responses(0);
  std::set<std::string> paths;
  for (const auto& spec : cr.devices()) {
    paths.insert(spec.container_path());
    CHECK(spec.host_path() == "/dev/null");
    CHECK(spec.permissions() == "rw");
  }
  CHECK(paths ==
        std::set<std::string>{"/dev/neuron8", "/dev/neuron9", "/dev/neuron10", "/dev/neuron11"});
  REQUIRE(cr.envs().count("NEURON_RT_VISIBLE_CORES") == 1);
  CHECK(cr.envs().at("NEURON_RT_VISIBLE_CORES") == "0-7");  // 4 devices x 2 cores, 0-based

  // The pod handshake: the kubelet reports what the pod holds; after Allocate the plugin marks
  // the pod, touching only its own keys.
  auto core_alloc = kubelet.AllocateFor({"ml", "train", "main"}, kCores, {"5", "4"});
  REQUIRE(core_alloc.ok());
  REQUIRE(Eventually(
      [&] { return api.Get(pod_path)["metadata"]["annotations"]["NEURON_ALLOCATED"] == "true"; },
      kPluginWait));
  const json ann = api.Get(pod_path)["metadata"]["annotations"];
  CHECK(ann["AWS_NEURON_IDS"] == "4,5");
  CHECK(ann["NEURON_ALLOC_TIME"] == "1700000000000000000");
  CHECK(ann["k8s.ovn.org/pod-networks"] == ovn);

  // One piece of silicon, one pod: device 2 (cores 4, 5) and core 16 (device 8) are taken
  // through the other resource; the refusal names the holder.
  auto clash = kubelet.AllocateFor({"ml", "thief", "main"}, kDevices, {"2"});
  REQUIRE_FALSE(clash.ok());
  CHECK(std::string(clash.status().message()).find("pod ml/train") != std::string::npos);
  clash = kubelet.AllocateFor({"ml", "thief", "main"}, kCores, {"16"});
  REQUIRE_FALSE(clash.ok());
  CHECK(std::string(clash.status().message()).find("pod ml/infer") != std::string::npos);
  // A real admission steers around both.
  auto steered = kubelet.Admit({"ml", "fair", "main"}, kDevices, 2);
  REQUIRE(steered.ok());
  for (const std::string& id : kubelet.Held(kDevices)) CHECK(id != "2");

  // An uncorrectable ECC error on device 3: it and its cores go Unhealthy. The rescan is an
  // hour away, so this comes through the health fast path.
  REQUIRE(sysfs::emulation::SetCounter(emulated, 3, "stats/hardware/mem_ecc_uncorrected", 1).ok());
  REQUIRE(kubelet.WaitForDevices(
      kDevices, [](const auto& r) { return Health(r, "3") == "Unhealthy" && Healthy(r) == 15; },
      kPluginWait));
  REQUIRE(kubelet.WaitForDevices(
      kCores,
      [](const auto& r) {
        return Health(r, "6") == "Unhealthy" && Health(r, "7") == "Unhealthy" && Healthy(r) == 30;
      },
      kPluginWait));

  // SIGTERM: exit 0, endpoint sockets removed.
  const std::string dev_sock = kubelet.dir() + "/aws-neuron.sock";
  const std::string core_sock = kubelet.dir() + "/aws-neuroncore.sock";
  CHECK(std::filesystem::exists(dev_sock));
  CHECK(std::filesystem::exists(core_sock));
  CHECK(plugin.Terminate() == 0);
  CHECK_FALSE(std::filesystem::exists(dev_sock));
  CHECK_FALSE(std::filesystem::exists(core_sock));
  CHECK(plugin.Log().find("device plugin stopped") != std::string::npos);

  // A new plugin process knows nothing in memory: it learns what pods hold from PodResources.
  Subprocess again({BinaryPath("neuron-device-plugin"), "--emulate=trn1.32xlarge",
                    "--emulate-dir=" + tmp.path + "/host2", "--device-plugin-dir=" + kubelet.dir(),
                    "--pod-resources-socket=" + kubelet.pod_resources_socket()},
                   tmp.path + "/plugin2.log");
  REQUIRE(again.started());
  const LogOnFailure dump_again{again};
  REQUIRE(kubelet.WaitForRegistrations(4, kPluginWait));
  REQUIRE(kubelet.WaitForDevices(
      kCores, [](const auto& r) { return r.devices_size() == 32 && Healthy(r) == 32; },
      kPluginWait));
  auto after = kubelet.AllocateFor({"ml", "thief", "main"}, kCores, {"16"});
  REQUIRE_FALSE(after.ok());
  CHECK(std::string(after.status().message()).find("pod ml/infer") != std::string::npos);
  CHECK(again.Terminate() == 0);
}

}  // namespace
}  // namespace neuron
