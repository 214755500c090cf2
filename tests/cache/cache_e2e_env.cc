// File: tests/cache/cache_e2e_env.cc
#include "tests/cache/cache_e2e_env.h"

#include <signal.h>
#include <sys/mount.h>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/cache/cache_api.h"
#include "lib/cache/compile_cache.h"
#include "lib/k8s/transport.h"
#include "lib/operator/yaml_input.h"

namespace neuron::cache::testing {
namespace {

using neuron::testing::Eventually;

std::string SourcePath(const std::string& rel) {
  const char* root = std::getenv("NEURON_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/" + rel;
}

std::string CachePath(const std::string& name) {
  return absl::StrCat("/apis/k8s.aws/v1alpha1/namespaces/team/neuroncaches/", name);
}

}  // namespace

std::string NeffFor(const std::string& root, const neuron::testing::CompileCacheSpec& spec,
                    const neuron::testing::GeneratedModule& m) {
  return NeffPath(root, spec.compiler_version, m.graph_hash, m.flags_hash);
}

CacheCluster::CacheCluster() : dir_(neuron::testing::MakeTempDir("nc")) {
  REQUIRE(!dir_.empty());
  REQUIRE(api_.Start().ok());
  k8s::ClientConfig cfg;
  cfg.server = api_.url();
  auto transport = k8s::NewTransport(cfg, {}, {});
  REQUIRE(transport.ok());
  client_ = std::make_shared<k8s::RestClient>(*transport);
  auto crds = op::ParseYamlDocuments(ReadFile(SourcePath("deploy/operator/crd-neuroncaches.yaml")));
  REQUIRE(crds.ok());
  for (const json& crd : *crds) REQUIRE(client_->Create(k8s::resources::kCRDs, "", crd).ok());
  REQUIRE(
      client_
          ->Create(k8s::resources::kNamespaces, "",
                   {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}})
          .ok());
  registry_ = std::make_unique<neuron::testing::LocalRegistry>();
  REQUIRE(registry_->status().ok());
  kubeconfig_ = dir_ + "/kubeconfig";
  std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n"
                             << "- name: fake\n  cluster:\n    server: " << api_.url()
                             << "\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n"
                             << "- name: t\n  context:\n    cluster: fake\n    user: u\n";
}

CacheCluster::~CacheCluster() {
  for (auto& [node, agent] : agents_) agent->Terminate();
  agents_.clear();
  // Views a failed test left mounted, then the tree.
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir_, std::filesystem::directory_options::skip_permission_denied)) {
    if (e.path().filename() == "mount" || e.path().filename() == "view") {
      umount2(e.path().c_str(), MNT_DETACH);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string CacheCluster::Push(const std::string& repo_tag,
                               const neuron::testing::CompileCacheSpec& spec) {
  const std::string src = absl::StrCat(dir_, "/src-", std::hash<std::string>{}(repo_tag), "-",
                                       spec.target, "-", spec.modules);
  std::filesystem::remove_all(src);
  REQUIRE(neuron::testing::WriteCompileCache(src, spec).ok());
  auto digest = registry_->Push(src, repo_tag);
  CAPTURE(digest.status().ToString());
  REQUIRE(digest.ok());
  return *digest;
}

neuron::testing::Subprocess& CacheCluster::StartAgent(const std::string& node,
                                                      const std::string& instance_type) {
  if (!emulate_.contains(node)) {
    REQUIRE(client_
                ->Create(k8s::resources::kNodes, "",
                         {{"apiVersion", "v1"},
                          {"kind", "Node"},
                          {"metadata", {{"name", node}, {"labels", {{"team", "ml"}}}}}})
                .ok());
    emulate_[node] = instance_type;
    ports_[node] = neuron::testing::FreeLoopbackPort();
  }
  std::filesystem::create_directories(KubeletDir(node) + "/pods");
  auto agent = std::make_unique<neuron::testing::Subprocess>(
      std::vector<std::string>{
          neuron::testing::BinaryPath("neuron-node-agent"), "--emulate=" + instance_type,
          "--node-name=" + node, "--kubeconfig=" + kubeconfig_,
          absl::StrCat("--listen=127.0.0.1:", ports_[node]), "--cache-dir=" + CacheDir(node),
          "--kubelet-dir=" + KubeletDir(node), "--cache-plain-http-registries=" + registry_->host(),
          "--cache-stall-timeout=3s", "--interval=1s"},
      absl::StrCat(dir_, "/agent-", node, ".log"));
  REQUIRE(agent->started());
  neuron::testing::Subprocess& ref = *agent;
  agents_[node] = std::move(agent);
  REQUIRE(!ref.WaitForLog("compile caches on dir=", absl::Seconds(30)).empty());
  return ref;
}

void CacheCluster::StopAgent(const std::string& node, bool kill) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;
  if (kill) ::kill(it->second->pid(), SIGKILL);
  it->second->Terminate();
  agents_.erase(it);
}

void CacheCluster::ApplyCache(const std::string& name, const std::string& image,
                              const std::string& resolved) {
  json obj = {{"apiVersion", "k8s.aws/v1alpha1"},
              {"kind", "NeuronCache"},
              {"metadata", {{"name", name}, {"namespace", "team"}}},
              {"spec", {{"image", image}}}};
  auto created = client_->Create(kNeuronCaches, "team", obj);
  CAPTURE(created.status().ToString());
  REQUIRE(created.ok());
  if (!resolved.empty()) SetResolved(name, resolved);
}

void CacheCluster::SetResolved(const std::string& name, const std::string& digest) {
  json obj = api_.Get(CachePath(name));
  REQUIRE(!obj.is_null());
  obj["status"]["resolvedDigest"] = digest;
  REQUIRE(api_.Put(CachePath(name), obj).ok());
}

json CacheCluster::Record(const std::string& node, const std::string& name) {
  const json obj = api_.Get("/apis/k8s.aws/v1alpha1/neuroncachenodes/" + node);
  for (const json& r : MemberOrNull(MemberOrNull(obj, "status"), "caches")) {
    if (StringMember(r, "name") == name && StringMember(r, "namespace") == "team") return r;
  }
  return nullptr;
}

json CacheCluster::WaitForState(const std::string& node, const std::string& name,
                                const std::string& state, const std::string& digest,
                                absl::Duration timeout) {
  json last;
  const bool ok = Eventually(
      [&] {
        last = Record(node, name);
        return StringMember(last, "state") == state &&
               (digest.empty() || StringMember(last, "digest") == digest);
      },
      timeout);
  CAPTURE(node, name, state, last.dump(), agents_.contains(node) ? agents_[node]->Log() : "");
  REQUIRE(ok);
  return last;
}

neuron::testing::InlineVolume CacheCluster::Volume(const std::string& node, const std::string& pod,
                                                   const std::string& cache) const {
  const std::string uid = "uid-" + pod;
  return {absl::StrCat(KubeletDir(node), "/plugins/", kCsiDriverName, "/csi.sock"),
          "csi-" + uid,
          absl::StrCat(KubeletDir(node), "/pods/", uid, "/volumes/kubernetes.io~csi/cache/mount"),
          "team",
          pod,
          uid,
          {{kVolumeAttrCache, cache}}};
}

grpc::Status CacheCluster::Publish(const std::string& node, const std::string& pod,
                                   const std::string& cache, std::string* target) {
  const neuron::testing::InlineVolume v = Volume(node, pod, cache);
  *target = v.target;
  return neuron::testing::CsiPublish(v);
}

grpc::Status CacheCluster::Unpublish(const std::string& node, const std::string& pod) {
  return neuron::testing::CsiUnpublish(Volume(node, pod, ""));
}

}  // namespace neuron::cache::testing
