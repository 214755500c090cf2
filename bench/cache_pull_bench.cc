// File: bench/cache_pull_bench.cc
// Compiled-model cache pull, end to end on this machine: a generated compile cache of
// CACHE_MIB (default 1024) pushed to a loopback docker-registry, then
//   baseline: `skopeo copy docker://... oci:DIR` + `tar -xzf` of each layer (what a user would
//             script), and
//   ours:     a NeuronCache applied to the fake API server -> the real neuron-node-agent reports
//             it Extracted on its NeuronCacheNode,
// each RUNS times (default 3, fresh directories each run). Prints min/median seconds, the ratio,
// and the agent's peak RSS (VmHWM) at CACHE_MIB and at a quarter of it (it must not grow with the
// cache size).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/proc_status.h"
#include "lib/base/json_access.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "lib/operator/yaml_input.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/compile_cache_gen.h"
#include "tests/testing/local_registry.h"
#include "tests/testing/subprocess.h"

namespace {

using neuron::testing::Eventually;
namespace fs = std::filesystem;

int EnvInt(const char* name, int def) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : def;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Bench {
  std::string dir = neuron::testing::MakeTempDir("nc-bench");
  neuron::testing::LocalRegistry registry;
  neuron::fakes::FakeApiServer api;
  std::shared_ptr<neuron::k8s::RestClient> client;
  std::string kubeconfig = dir + "/kubeconfig";

  bool Start() {
    if (!registry.status().ok() || !api.Start().ok()) return false;
    neuron::k8s::ClientConfig cfg;
    cfg.server = api.url();
    auto transport = neuron::k8s::NewTransport(cfg, {}, {});
    if (!transport.ok()) return false;
    client = std::make_shared<neuron::k8s::RestClient>(*transport);
    const char* src = std::getenv("NEURON_SOURCE_DIR");
    auto crds = neuron::op::ParseYamlDocuments(
        Slurp(std::string(src != nullptr ? src : ".") + "/deploy/operator/crd-neuroncaches.yaml"));
    if (!crds.ok()) return false;
    for (const auto& crd : *crds) (void)client->Create(neuron::k8s::resources::kCRDs, "", crd);
    (void)client->Create(
        neuron::k8s::resources::kNamespaces, "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}});
    (void)client->Create(neuron::k8s::resources::kNodes, "",
                         {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}});
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n"
                              << "- name: f\n  cluster:\n    server: " << api.url()
                              << "\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n"
                              << "- name: t\n  context:\n    cluster: f\n    user: u\n";
    return true;
  }

  std::string Push(const std::string& repo_tag, int mib) {
    const std::string src = absl::StrCat(dir, "/src-", mib);
    neuron::testing::CompileCacheSpec spec;
    spec.modules = std::max(1, mib / 16);
    spec.neff_bytes = (static_cast<uint64_t>(mib) << 20) / spec.modules;
    if (!neuron::testing::WriteCompileCache(src, spec).ok()) return "";
    auto d = registry.Push(src, repo_tag);
    fs::remove_all(src);
    return d.ok() ? *d : "";
  }

  // skopeo copy to an OCI layout, then tar -xzf every layer blob.
  double Baseline(const std::string& repo_tag, int run) {
    const std::string out = absl::StrCat(dir, "/baseline-", run);
    fs::create_directories(out);
    const absl::Time t0 = absl::Now();
    int rc = neuron::testing::RunCommand(
        {"/usr/bin/skopeo", "copy", "--quiet", "--src-tls-verify=false",
         absl::StrCat("docker://", registry.host(), "/", repo_tag), "oci:" + out + "/oci:x"},
        dir + "/skopeo.log", absl::Minutes(10));
    fs::create_directories(out + "/x");
    std::error_code ec;
    for (const auto& blob : fs::directory_iterator(out + "/oci/blobs/sha256", ec)) {
      if (fs::file_size(blob.path()) < 4096) continue;  // config, manifest, index
      rc |= neuron::testing::RunCommand(
          {"/usr/bin/tar", "-xzf", blob.path().string(), "-C", out + "/x"}, dir + "/tar.log",
          absl::Minutes(10));
    }
    const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
    fs::remove_all(out);
    return rc == 0 ? secs : -1;
  }

  // NeuronCache applied -> Extracted on a fresh agent; peak RSS into *hwm_kib.
  double Ours(const std::string& repo_tag, const std::string& digest, int run, long* hwm_kib) {
    const std::string cache_dir = absl::StrCat(dir, "/agent-", run);
    neuron::testing::Subprocess agent(
        {neuron::testing::BinaryPath("neuron-node-agent"), "--emulate=trn2.48xlarge",
         "--node-name=n1", "--kubeconfig=" + kubeconfig, "--listen=127.0.0.1:0",
         "--cache-dir=" + cache_dir, "--csi=false",
         "--cache-plain-http-registries=" + registry.host()},
        dir + "/agent.log");
    if (agent.WaitForLog("compile caches on dir=", absl::Seconds(30)).empty()) return -1;
    const std::string name = absl::StrCat("c", run);
    nlohmann::json obj = {{"apiVersion", "k8s.aws/v1alpha1"},
                          {"kind", "NeuronCache"},
                          {"metadata", {{"name", name}, {"namespace", "team"}}},
                          {"spec", {{"image", absl::StrCat(registry.host(), "/", repo_tag)}}}};
    const std::string path = "/apis/k8s.aws/v1alpha1/namespaces/team/neuroncaches/" + name;
    const absl::Time t0 = absl::Now();
    // Created, then its status written as the operator does after resolving the tag (a create
    // drops status, as kube-apiserver does for a resource with a status subresource).
    if (!api.Put(path, obj).ok()) return -1;
    obj = api.Get(path);
    obj["status"]["resolvedDigest"] = digest;
    if (!api.Put(path, obj).ok()) return -1;
    const bool done = Eventually(
        [&] {
          const auto node = api.Get("/apis/k8s.aws/v1alpha1/neuroncachenodes/n1");
          for (const auto& r :
               neuron::MemberOrNull(neuron::MemberOrNull(node, "status"), "caches")) {
            if (neuron::StringMember(r, "name") == name &&
                neuron::StringMember(r, "state") == "Extracted") {
              return true;
            }
          }
          return false;
        },
        absl::Minutes(10));
    const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
    *hwm_kib = neuron::bench::ProcStatusKiB(agent.pid(), "VmHWM");
    (void)client->Delete({"k8s.aws", "v1alpha1", "neuroncaches", true}, "team", name);
    agent.Terminate();
    fs::remove_all(cache_dir);
    return done ? secs : -1;
  }
};

}  // namespace

int main() {
  const int mib = EnvInt("CACHE_MIB", 1024);
  const int runs = EnvInt("RUNS", 3);
  Bench b;
  if (!b.Start()) {
    std::fprintf(stderr, "cache_pull_bench: registry or fake API server did not start\n");
    return 1;
  }
  const std::string big = b.Push("team/big:v1", mib);
  const std::string small = b.Push("team/small:v1", std::max(1, mib / 4));
  if (big.empty() || small.empty()) {
    std::fprintf(stderr, "cache_pull_bench: push failed (see %s)\n", b.dir.c_str());
    return 1;
  }
  std::vector<double> base;
  std::vector<double> ours;
  long hwm_big = 0;
  long hwm_small = 0;
  for (int i = 0; i < runs; ++i) {
    base.push_back(b.Baseline("team/big:v1", i));
    ours.push_back(b.Ours("team/big:v1", big, i, &hwm_big));
  }
  (void)b.Ours("team/small:v1", small, runs, &hwm_small);
  std::printf("cache %d MiB, %d runs\n", mib, runs);
  std::printf("  skopeo copy + tar -xzf       min %.2f s  median %.2f s\n",
              *std::min_element(base.begin(), base.end()), Median(base));
  std::printf("  NeuronCache -> Extracted     min %.2f s  median %.2f s\n",
              *std::min_element(ours.begin(), ours.end()), Median(ours));
  std::printf("  ratio (median)               %.2fx (target <= 1.5x)\n",
              Median(ours) / Median(base));
  std::printf("  agent peak RSS (VmHWM)       %ld KiB at %d MiB, %ld KiB at %d MiB\n", hwm_big, mib,
              hwm_small, std::max(1, mib / 4));
  std::error_code ec;
  fs::remove_all(b.dir, ec);
  return 0;
}
