// File: tests/demo/stack_demo.cc
// `make demo`: the whole stack on one machine. The real binaries (operator, node agents, device
// plugins, scheduler extender) run as processes against the fake kube-apiserver; two fake
// kubelets speak the device plugin API to the plugins; a trn1.32xlarge and a trn2.48xlarge are
// emulated in generated sysfs trees. The operator reconciles the sample DeviceConfig, pods are
// scheduled through the extender exactly as kube-scheduler calls it and admitted by the kubelets,
// and a summary is printed. With --check the exit code says whether every pod landed on a
// connected set and the DeviceConfig became Ready (CI runs it so).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/topology/node_topology.h"
#include "lib/topology/shapes.h"
#include "lib/topology/valid_sets.h"
#include "nlohmann/json.hpp"
#include "tests/demo/demo_cache.h"
#include "tests/demo/demo_cluster.h"
#include "tests/demo/demo_scheduler.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::demo {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::Subprocess;

constexpr char kDevices[] = "aws.amazon.com/neuron";
constexpr char kCores[] = "aws.amazon.com/neuroncore";
constexpr absl::Duration kWait = absl::Seconds(30);

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Failed expectations, reported at the end (and the exit code under --check).
struct Verdict {
  std::vector<std::string> failures;
  void Expect(bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
  }
};

void Section(const std::string& title) { std::printf("\n== %s\n", title.c_str()); }

// One emulated Neuron node: its kubelet (in this process), node agent and device plugin.
struct NodeRig {
  std::string name;
  std::string shape;
  std::unique_ptr<fakes::FakeKubelet> kubelet;
  std::unique_ptr<Subprocess> agent, plugin;
  int agent_port = -1;
};

absl::Status StartNode(NodeRig& n, const std::string& work, const std::string& kubeconfig,
                       const CacheDemo& caches) {
  n.kubelet = std::make_unique<fakes::FakeKubelet>();
  if (absl::Status s = n.kubelet->Start(); !s.ok()) return s;
  if (absl::Status s = n.kubelet->StartPodResources(); !s.ok()) return s;
  n.agent_port = FreePort();
  const std::string dir = work + "/" + n.name;
  std::filesystem::create_directories(dir);
  std::vector<std::string> agent_args = {testing::BinaryPath("neuron-node-agent"),
                                         "--emulate=" + n.shape,
                                         "--emulate-dir=" + dir + "/agent-host",
                                         absl::StrCat("--listen=127.0.0.1:", n.agent_port),
                                         "--node-name=" + n.name,
                                         "--features-dir=" + dir + "/features.d",
                                         "--interval=200ms",
                                         "--kubeconfig=" + kubeconfig};
  for (std::string& f : caches.AgentFlags(dir)) agent_args.push_back(std::move(f));
  n.agent = std::make_unique<Subprocess>(std::move(agent_args), dir + "/node-agent.log");
  n.plugin = std::make_unique<Subprocess>(
      std::vector<std::string>{testing::BinaryPath("neuron-device-plugin"), "--emulate=" + n.shape,
                               "--emulate-dir=" + dir + "/plugin-host",
                               "--device-plugin-dir=" + n.kubelet->dir(),
                               "--kubeconfig=" + kubeconfig, "--node-name=" + n.name,
                               "--pod-resources-socket=" + n.kubelet->pod_resources_socket(),
                               "--handshake-interval=500ms"},
      dir + "/device-plugin.log");
  return absl::OkStatus();
}

int Healthy(const v1beta1::ListAndWatchResponse& r) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == "Healthy";
  return n;
}

json Pod(const std::string& name, const std::string& resource, int count) {
  const json q = {{resource, std::to_string(count)}, {"cpu", "4"}, {"memory", "16Gi"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", kWorkloadNs}}},
          {"spec",
           {{"schedulerName", "neuron-scheduler"},
            {"containers",
             {{{"name", "main"},
               {"image", "public.ecr.aws/neuron/pytorch-training-neuronx:2.1"},
               {"resources", {{"limits", q}, {"requests", q}}}}}}}}};
}

std::vector<int> Ids(const std::string& csv) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(csv, ',', absl::SkipEmpty())) {
    out.push_back(std::atoi(std::string(part).c_str()));
  }
  return out;
}

// The metric lines of a /metrics page whose name starts with one of `prefixes`.
std::vector<std::string> MetricLines(int port, const std::vector<std::string>& prefixes,
                                     size_t max) {
  std::vector<std::string> out;
  const testing::HttpResult r = testing::HttpGet(port, "/metrics");
  for (absl::string_view line : absl::StrSplit(r.body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    for (const std::string& p : prefixes) {
      if (absl::StartsWith(line, p) && out.size() < max) out.emplace_back(line);
    }
  }
  return out;
}

struct Demo {
  std::string source_dir;
  std::string work;
  DemoCluster cluster;
  std::vector<NodeRig> nodes;
  std::unique_ptr<Subprocess> op, extender;
  CacheDemo caches;
  int extender_port = -1, operator_metrics_port = -1;
  Verdict verdict;

  absl::Status Run();
  absl::Status StartNodes(const std::string& kubeconfig);
  absl::Status RunOperator(const std::string& kubeconfig);
  absl::Status SchedulePods(const std::string& kubeconfig);
  void CompileCaches();
  void PrintMetrics();
  absl::Status PrintDeviceConfig();
  void Stop();
};

absl::Status Demo::StartNodes(const std::string& kubeconfig) {
  Section("nodes: node agent + device plugin per node, each against its own fake kubelet");
  for (const auto& [name, shape] : std::vector<std::pair<std::string, std::string>>{
           {"trn1-node", "trn1.32xlarge"}, {"trn2-node", "trn2.48xlarge"}}) {
    if (absl::Status s = cluster.AddNode(name, shape); !s.ok()) return s;
    NodeRig& n = nodes.emplace_back();
    n.name = name;
    n.shape = shape;
    if (absl::Status s = StartNode(n, work, kubeconfig, caches); !s.ok()) return s;
  }
  for (NodeRig& n : nodes) {
    if (!n.kubelet->WaitForRegistrations(2, kWait)) {
      return absl::DeadlineExceededError(n.name + ": the device plugin did not register:\n" +
                                         n.plugin->Log());
    }
    int counts[2] = {0, 0};
    const char* resources[2] = {kDevices, kCores};
    for (int i = 0; i < 2; ++i) {
      bool listed = n.kubelet->WaitForDevices(
          resources[i], [](const auto& r) { return r.devices_size() > 0; }, kWait);
      if (!listed) return absl::DeadlineExceededError(n.name + ": no ListAndWatch update");
      const auto latest = n.kubelet->LatestDevices(resources[i]);
      counts[i] = Healthy(*latest);
      // What the kubelet does with a plugin's list: node capacity and allocatable.
      if (absl::Status s =
              cluster.SetExtendedResources(n.name, resources[i], latest->devices_size(), counts[i]);
          !s.ok()) {
        return s;
      }
    }
    const bool agent_up =
        Eventually([&] { return testing::HttpGet(n.agent_port, "/readyz").status == 200; }, kWait);
    verdict.Expect(agent_up, n.name + ": node agent ready");
    const json inv = json::parse(testing::HttpGet(n.agent_port, "/inventory").body, nullptr, false);
    std::printf("%-10s %-14s plugin advertises %2d %s + %2d %s (healthy); node agent: %s\n",
                n.name.c_str(), n.shape.c_str(), counts[0], kDevices, counts[1], kCores,
                inv.is_object() ? absl::StrCat(inv.value("devices", json::array()).size(),
                                               " devices, LNC ", inv["lnc"].value("value", 0))
                                      .c_str()
                                : "no inventory");
    verdict.Expect(counts[0] == 16, n.name + ": 16 devices advertised");
  }
  return absl::OkStatus();
}

absl::Status Demo::RunOperator(const std::string& kubeconfig) {
  Section("neuron-operator: the sample DeviceConfig");
  operator_metrics_port = FreePort();
  op = std::make_unique<Subprocess>(
      std::vector<std::string>{testing::BinaryPath("neuron-operator"), "--kubeconfig=" + kubeconfig,
                               std::string("--namespace=") + kOperatorNs,
                               "--cache-plain-http-registries=" + caches.registry_host(),
                               absl::StrCat("--health-addr=127.0.0.1:", FreePort()),
                               absl::StrCat("--metrics-addr=127.0.0.1:", operator_metrics_port)},
      work + "/operator.log");
  absl::StatusOr<json> dc = cluster.ApplySampleDeviceConfig();
  if (!dc.ok()) return dc.status();
  // Status is written once a pass has applied everything: list the objects after that.
  const bool applied = Eventually(
      [&] {
        auto got = cluster.DeviceConfig();
        return got.ok() && got->contains("status") && (*got)["status"].contains("conditions");
      },
      kWait);
  absl::StatusOr<std::vector<std::string>> listed = cluster.OperatorObjects();
  if (!listed.ok()) return listed.status();
  const std::vector<std::string>& objects = *listed;
  verdict.Expect(applied, "the operator applied the DeviceConfig's objects");
  std::printf("applied %zu objects for DeviceConfig %s/neuron:\n", objects.size(), kOperatorNs);
  for (const std::string& o : objects) std::printf("  %s\n", o.c_str());
  std::printf(
      "(no container runs here: the demo plays the DaemonSet, Deployment and KMM "
      "controllers and marks their pods available on both nodes)\n");
  const bool ready = Eventually(
      [&] {
        (void)cluster.PlayWorkloadControllers(static_cast<int>(nodes.size()));
        auto got = cluster.DeviceConfig();
        if (!got.ok()) return false;
        for (const json& c : (*got)["status"].value("conditions", json::array())) {
          if (c["type"] == "Ready") return c["status"] == "True";
        }
        return false;
      },
      kWait);
  verdict.Expect(ready, "DeviceConfig Ready");
  return absl::OkStatus();
}

absl::Status Demo::SchedulePods(const std::string& kubeconfig) {
  Section("neuron-scheduler-extender: pods placed as kube-scheduler calls it");
  extender_port = FreePort();
  extender = std::make_unique<Subprocess>(
      std::vector<std::string>{testing::BinaryPath("neuron-scheduler-extender"),
                               absl::StrCat("--listen=127.0.0.1:", extender_port),
                               "--kubeconfig=" + kubeconfig, "--policy=binpack"},
      work + "/extender.log");
  if (!Eventually([&] { return testing::HttpGet(extender_port, "/readyz").status == 200; },
                  kWait)) {
    return absl::DeadlineExceededError("the extender did not become ready:\n" + extender->Log());
  }
  struct Ask {
    std::string pod, resource;
    int count;
    bool fits;  // false: the demo shows a refusal and its reason
  };
  const std::vector<Ask> asks = {{"bert-serving", kCores, 2, true},
                                 {"llama-train", kDevices, 8, true},
                                 {"odd-size", kDevices, 3, false},
                                 {"mistral-finetune", kCores, 16, true},
                                 {"gpt-pretrain", kDevices, 16, false}};
  std::vector<std::string> names;
  for (const NodeRig& n : nodes) names.push_back(n.name);
  for (const Ask& a : asks) {
    absl::StatusOr<json> created = cluster.client().Create(k8s::resources::kPods, kWorkloadNs,
                                                           Pod(a.pod, a.resource, a.count));
    if (!created.ok()) return created.status();
    absl::StatusOr<Placement> p = SchedulePod(extender_port, *created, names);
    if (!p.ok()) return p.status();
    std::printf("\n%s asks %d x %s\n", a.pod.c_str(), a.count, a.resource.c_str());
    for (const auto& [node, reason] : p->refused) {
      std::printf("  filter: %s refused: %s\n", node.c_str(), reason.c_str());
    }
    for (const auto& [node, score] : p->scores) {
      std::printf("  prioritize: %s scores %d\n", node.c_str(), score);
    }
    if (p->node.empty()) {
      std::printf("  -> unschedulable (stays Pending, as kube-scheduler would leave it)\n");
      verdict.Expect(!a.fits, a.pod + " found a node");
      continue;
    }
    verdict.Expect(a.fits, a.pod + " was refused everywhere");
    NodeRig& rig = *std::find_if(nodes.begin(), nodes.end(),
                                 [&](const NodeRig& n) { return n.name == p->node; });
    absl::StatusOr<json> bound = cluster.client().Get(k8s::resources::kPods, kWorkloadNs, a.pod);
    if (!bound.ok()) return bound.status();
    const json ann = (*bound)["metadata"].value("annotations", json::object());
    const std::string ids = ann.value("AWS_NEURON_IDS", "");
    const auto topo = topology::TopologyForShape(*topology::FindShape(rig.shape));
    const bool connected =
        topo.ok() && (a.resource == kDevices ? topology::IsValidDeviceSet(*topo, Ids(ids))
                                             : topology::IsValidCoreSet(*topo, Ids(ids)));
    std::printf("  bind: %s on %s, %s IDs %s (%s)\n", a.pod.c_str(), p->node.c_str(),
                ann.value("NEURON_RESOURCE_TYPE", "?").c_str(), ids.c_str(),
                connected ? "a connected set" : "NOT a valid set");
    verdict.Expect(connected, a.pod + ": connected set on " + p->node);

    // The kubelet admits the container: it asks the plugin for its preferred IDs (the plugin
    // follows the extender's annotation), then Allocate.
    std::vector<std::string> chosen;
    for (absl::string_view id : absl::StrSplit(ids, ',', absl::SkipEmpty())) {
      chosen.emplace_back(id);
    }
    v1beta1::PreferredAllocationRequest pref;
    auto* req = pref.add_container_requests();
    const auto listed = rig.kubelet->LatestDevices(a.resource);
    for (const auto& d : listed->devices()) req->add_available_deviceids(d.id());
    req->set_allocation_size(a.count);
    const bool follows = Eventually(
        [&] {
          auto r = rig.kubelet->GetPreferredAllocation(a.resource, pref);
          if (!r.ok() || r->container_responses_size() != 1) return false;
          const auto& got = r->container_responses(0).deviceids();
          return std::vector<std::string>(got.begin(), got.end()) == chosen;
        },
        kWait);
    verdict.Expect(follows, a.pod + ": the device plugin prefers the extender's IDs");
    auto alloc = rig.kubelet->AllocateFor({kWorkloadNs, a.pod, "main"}, a.resource, chosen);
    if (!alloc.ok()) {
      verdict.Expect(false,
                     a.pod + ": kubelet admission: " + std::string(alloc.status().message()));
      continue;
    }
    const auto& cr = alloc->container_responses(0);
    std::vector<std::string> devs;
    for (const auto& spec : cr.devices()) devs.push_back(spec.container_path());
    const auto env = cr.envs().find("NEURON_RT_VISIBLE_CORES");
    std::printf(
        "  kubelet: plugin preferred the same IDs; container gets %s, "
        "NEURON_RT_VISIBLE_CORES=%s\n",
        absl::StrJoin(devs, " ").c_str(), env != cr.envs().end() ? env->second.c_str() : "(unset)");
  }
  return absl::OkStatus();
}

void Demo::PrintMetrics() {
  Section("metrics (excerpt)");
  const NodeRig& n = nodes.front();
  for (const std::string& line : MetricLines(
           n.agent_port, {"neuron_node_devices", "neuron_device_healthy{device=\"0\""}, 4)) {
    std::printf("node agent %s: %s\n", n.name.c_str(), line.c_str());
  }
  for (const std::string& line :
       MetricLines(extender_port, {"neuron_extender_requests_total"}, 6)) {
    std::printf("extender: %s\n", line.c_str());
  }
  for (const std::string& line :
       MetricLines(operator_metrics_port, {"neuron_operator_reconcile_total"}, 4)) {
    std::printf("operator: %s\n", line.c_str());
  }
}

absl::Status Demo::PrintDeviceConfig() {
  Section("kubectl get deviceconfigs -n aws-neuron-operator");
  absl::StatusOr<json> dc = cluster.DeviceConfig();
  if (!dc.ok()) return dc.status();
  const json status = (*dc)["status"];
  std::string ready = "?";
  for (const json& c : status.value("conditions", json::array())) {
    if (c["type"] == "Ready") ready = c.value("status", "?");
  }
  std::printf("NAME     READY   DRIVER   PLUGIN   SCHEDULER\n");
  std::printf("neuron   %-7s %-8s %-8s %s\n", ready.c_str(),
              status.value("driverSummary", "").c_str(),
              status.value("devicePluginSummary", "").c_str(),
              status.value("schedulerSummary", "").c_str());
  for (const json& c : status.value("conditions", json::array())) {
    std::printf("  %-18s %-6s %-20s %s\n", c.value("type", "").c_str(),
                c.value("status", "").c_str(), c.value("reason", "").c_str(),
                c.value("message", "").c_str());
  }
  return absl::OkStatus();
}

void Demo::CompileCaches() {
  Section("compiled-model caches: NeuronCache from a registry, mounted into a pod (CSI)");
  std::vector<std::pair<std::string, std::string>> node_dirs;
  for (const NodeRig& n : nodes) node_dirs.emplace_back(n.name, work + "/" + n.name);
  for (const auto& [what, held] :
       caches.Run(cluster.client(), kWorkloadNs, node_dirs, "trn2-node", work)) {
    verdict.Expect(held, what);
  }
}

void Demo::Stop() {
  Section("shutdown (SIGTERM)");
  auto stop = [&](const std::string& what, std::unique_ptr<Subprocess>& p) {
    if (!p) return;
    const int code = p->Terminate();
    std::printf("%-28s exited %d\n", what.c_str(), code);
    verdict.Expect(code == 0, what + " exits cleanly on SIGTERM");
    p.reset();
  };
  stop("neuron-scheduler-extender", extender);
  stop("neuron-operator", op);
  for (NodeRig& n : nodes) {
    stop("neuron-device-plugin " + n.name, n.plugin);
    stop("neuron-node-agent " + n.name, n.agent);
    n.kubelet.reset();
  }
}

absl::Status Demo::Run() {
  const std::string kubeconfig = work + "/kubeconfig";
  if (absl::Status s = cluster.Start(source_dir, kubeconfig); !s.ok()) return s;
  std::printf("fake kube-apiserver on %s (DeviceConfig, KMM Module and NFD CRDs installed)\n",
              cluster.server().url().c_str());
  absl::Status s = caches.Start();
  if (s.ok()) s = StartNodes(kubeconfig);
  if (s.ok()) s = RunOperator(kubeconfig);
  if (s.ok()) s = SchedulePods(kubeconfig);
  if (s.ok()) CompileCaches();
  if (s.ok()) PrintMetrics();
  if (s.ok()) s = PrintDeviceConfig();
  Stop();
  return s;
}

}  // namespace
}  // namespace neuron::demo

int main(int argc, char** argv) {
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check") {
      check = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--check]\n  Runs the whole stack locally (see README). --check: "
                   "exit 1 unless every expectation held.\n  Env: NEURON_SOURCE_DIR (repository), "
                   "NEURON_BIN_DIR (binaries, default build/bin).\n",
                   argv[0]);
      return arg == "--help" ? 0 : 2;
    }
  }
  neuron::demo::Demo demo;
  const char* src = std::getenv("NEURON_SOURCE_DIR");
  demo.source_dir = src != nullptr ? src : ".";
  char tmpl[] = "/tmp/neuron-demo-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  demo.work = tmpl;
  const absl::Status s = demo.Run();
  if (!s.ok()) demo.verdict.failures.push_back(std::string(s.message()));
  std::printf("\n");
  if (demo.verdict.failures.empty()) {
    std::printf(
        "demo: every pod placed on a connected set, DeviceConfig Ready, compile cache pulled and "
        "mounted, clean shutdown\n");
    std::filesystem::remove_all(demo.work);
    return 0;
  }
  for (const std::string& f : demo.verdict.failures) std::printf("demo: FAILED: %s\n", f.c_str());
  std::printf("logs kept in %s\n", demo.work.c_str());
  return check ? 1 : 0;
}
