// File: tests/demo/demo_cache.cc
#include "tests/demo/demo_cache.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/cache/cache_api.h"
#include "lib/cache/compile_cache.h"
#include "tests/testing/compile_cache_gen.h"
#include "tests/testing/csi_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron::demo {
namespace {

using nlohmann::json;
using testing::Eventually;
namespace fs = std::filesystem;

constexpr char kCacheName[] = "llama-compiled";
constexpr absl::Duration kCacheWait = absl::Seconds(60);

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// This node's record of the cache on its NeuronCacheNode (null while absent).
json Record(k8s::RestClient& client, const std::string& node) {
  auto obj = client.Get(cache::kNeuronCacheNodes, "", node);
  if (!obj.ok()) return nullptr;
  for (const json& r : MemberOrNull(MemberOrNull(*obj, "status"), "caches")) {
    if (StringMember(r, "name") == kCacheName) return r;
  }
  return nullptr;
}

}  // namespace

absl::Status CacheDemo::Start() {
  registry_ = std::make_unique<testing::LocalRegistry>();
  return registry_->status();
}

std::vector<std::string> CacheDemo::AgentFlags(const std::string& dir) const {
  return {"--cache-dir=" + dir + "/cache", "--kubelet-dir=" + dir + "/kubelet",
          "--cache-plain-http-registries=" + registry_->host()};
}

std::vector<std::pair<std::string, bool>> CacheDemo::Run(
    k8s::RestClient& client, const std::string& ns,
    const std::vector<std::pair<std::string, std::string>>& nodes, const std::string& mount_node,
    const std::string& work) {
  std::vector<std::pair<std::string, bool>> out;
  testing::CompileCacheSpec spec;  // --target=trn2, 3 modules
  const std::string src = work + "/compile-cache";
  std::vector<testing::GeneratedModule> modules;
  (void)testing::WriteCompileCache(src, spec, &modules);
  auto digest = registry_->Push(src, "ml/llama-compiled:v1");
  out.emplace_back("compile cache pushed with scripts/pack-neuron-cache.sh", digest.ok());
  if (!digest.ok()) return out;
  std::printf("pushed %s/ml/llama-compiled:v1 (%d modules, --target=trn2) digest %s\n",
              registry_->host().c_str(), spec.modules, digest->substr(0, 19).c_str());
  const json cache_obj = {
      {"apiVersion", "k8s.aws/v1alpha1"},
      {"kind", "NeuronCache"},
      {"metadata", {{"name", kCacheName}, {"namespace", ns}}},
      {"spec", {{"image", absl::StrCat(registry_->host(), "/ml/llama-compiled:v1")}}}};
  out.emplace_back("NeuronCache applied", client.Create(cache::kNeuronCaches, ns, cache_obj).ok());
  for (const auto& entry : nodes) {
    const std::string& node = entry.first;
    json rec;
    Eventually(
        [&] {
          rec = Record(client, node);
          const std::string state = StringMember(rec, "state");
          return state == "Extracted" || state == "Incompatible" || state == "Failed";
        },
        kCacheWait);
    std::printf("  %-10s %-12s %s\n", node.c_str(), StringMember(rec, "state", "-").c_str(),
                StringMember(rec, "message").c_str());
    out.emplace_back(
        node + ": cache " + (node == mount_node ? "Extracted" : "Incompatible"),
        StringMember(rec, "state") == (node == mount_node ? "Extracted" : "Incompatible"));
  }
  // The pod's inline volume, as the kubelet mounts it on the trn2 node.
  const std::string dir = [&] {
    for (const auto& [n, d] : nodes) {
      if (n == mount_node) return d;
    }
    return std::string();
  }();
  testing::InlineVolume vol{
      absl::StrCat(dir, "/kubelet/plugins/", cache::kCsiDriverName, "/csi.sock"),
      "csi-trainer",
      dir + "/kubelet/pods/uid-trainer/volumes/kubernetes.io~csi/neuron-cache/mount",
      ns,
      "trainer",
      "uid-trainer",
      {{cache::kVolumeAttrCache, kCacheName}}};
  const grpc::Status published = testing::CsiPublish(vol);
  out.emplace_back("pod's inline volume published", published.ok());
  if (!published.ok()) return out;
  const std::string neff = cache::NeffPath(vol.target, spec.compiler_version, modules[1].graph_hash,
                                           modules[1].flags_hash);
  const bool hit = Slurp(neff).rfind(modules[1].neff_contents_prefix, 0) == 0;
  std::printf("pod trainer mounts it at %s: compiler lookup %s -> %s\n",
              cache::kDefaultCompileCachePath, neff.substr(vol.target.size()).c_str(),
              hit ? "hit (no compile)" : "MISS");
  out.emplace_back("the compiler's lookup hits the cached NEFF", hit);
  const fs::path fresh =
      fs::path(vol.target) / ("neuronxcc-" + spec.compiler_version) / "MODULE_new+graph";
  fs::create_directories(fresh);
  std::ofstream(fresh / "model.neff") << "compiled in the pod";
  const bool private_write =
      !fs::exists(dir + "/cache/images/sha256/" + digest->substr(7) + "/neuronxcc-" +
                  spec.compiler_version + "/MODULE_new+graph");
  std::printf("a graph compiled in the pod stays in its own view: %s\n",
              private_write ? "yes (node copy unchanged)" : "NO");
  out.emplace_back("a new graph stays private to the pod", private_write);
  out.emplace_back("pod's inline volume unpublished", testing::CsiUnpublish(vol).ok());
  json status;
  Eventually(
      [&] {
        auto got = client.Get(cache::kNeuronCaches, ns, kCacheName);
        status = got.ok() ? MemberOrNull(*got, "status") : json(nullptr);
        return IntOf(MemberAt(status, {"counts", "nodesExtracted"})) == 1;
      },
      kCacheWait);
  std::printf("kubectl get neuroncache -n %s: digest %s extracted %lld incompatible %lld\n",
              ns.c_str(), StringMember(status, "resolvedDigest").substr(0, 19).c_str(),
              static_cast<long long>(IntOf(MemberAt(status, {"counts", "nodesExtracted"}))),
              static_cast<long long>(IntOf(MemberAt(status, {"counts", "nodesIncompatible"}))));
  out.emplace_back("the operator resolved the tag to the pushed digest",
                   StringMember(status, "resolvedDigest") == *digest);
  return out;
}

}  // namespace neuron::demo
