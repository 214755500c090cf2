// File: tests/dra/dra_app_env.cc
#include "tests/dra/dra_app_env.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "lib/base/stop.h"
#include "lib/k8s/transport.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/fs.h"
#include "lib/sysfs/neuron_driver.h"

namespace neuron::dra::testing {

using nlohmann::json;

DraAppEnv::DraAppEnv(DraAppEnvOptions opts) : opts_(std::move(opts)) {
  // tmpfs when there is one: the emulated tree is thousands of small files.
  std::string t =
      std::filesystem::is_directory("/dev/shm") ? "/dev/shm/dra-app-XXXXXX" : "/tmp/dra-app-XXXXXX";
  if (::mkdtemp(t.data()) != nullptr) dir_ = t;
}

DraAppEnv::~DraAppEnv() {
  (void)Stop();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

bool DraAppEnv::Start() {
  if (dir_.empty() || !fake_.Start().ok() || !kubelet_.Start().ok()) return false;
  if (!fake_
           .Put("/api/v1/namespaces/default",
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}})
           .ok()) {
    return false;
  }
  if (!fake_
           .Put(std::string("/api/v1/nodes/") + kNode,
                {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", kNode}, {"labels", opts_.node_labels}}}})
           .ok()) {
    return false;
  }
  k8s::ClientConfig cfg;
  cfg.server = fake_.url();
  auto transport = k8s::NewHttpTransport(cfg);
  if (!transport.ok()) return false;
  client_ = std::make_shared<k8s::RestClient>(*transport);

  DraAppOptions o;
  o.host.emulate = opts_.shape;
  o.host.emulate_dir = host_root();
  o.host.node_name = kNode;
  o.host.health_interval = opts_.health_interval;
  o.host.healthy_after = opts_.healthy_after;
  o.client = client_;
  o.plugin.registrar_dir = kubelet_.registrar_dir();
  o.plugin.plugins_dir = kubelet_.plugins_dir();
  o.cdi_root = cdi_root();
  o.state_dir = dir_ + "/state";
  o.device_taints = opts_.device_taints;
  o.partitionable = opts_.partitionable;
  o.metrics_listen = "127.0.0.1:0";
  o.resync = opts_.resync;
  o.cache_mounts = opts_.cache_mounts;
  app_ = std::make_unique<DraApp>(std::move(o));
  runner_ = std::thread([this] { result_ = app_->Run(stop_); });
  return true;
}

absl::Status DraAppEnv::Stop() {
  NotifyOnce(stop_);
  if (runner_.joinable()) runner_.join();
  return result_;
}

json DraAppEnv::Slice() const {
  return fake_.Get(std::string("/apis/resource.k8s.io/v1/resourceslices/") + kNode +
                   "-neuron.aws.com-0");
}

json DraAppEnv::Device(const std::string& name) const {
  const json slice = Slice();
  if (!slice.is_object()) return nullptr;
  for (const json& d : slice["spec"]["devices"]) {
    if (d["name"] == name) return d;
  }
  return nullptr;
}

bool DraAppEnv::WriteFault(int d, uint64_t value) const {
  auto fs = sysfs::MakeRootedFs(host_root());
  const std::string& name = sysfs::UncorrectableErrorCounters().front();
  // Where driver 2.30.2 puts it; SetCounter follows the tree's own layout.
  return sysfs::emulation::SetCounter(fs->root(), d, sysfs::FindDeviceLeaf(name)->known, value)
      .ok();
}

bool DraAppEnv::WriteClassAttributes(const std::map<std::string, std::string>& files) const {
  const std::filesystem::path dir = std::filesystem::path(host_root()) / "sys/class/neuron_device";
  for (const auto& [name, body] : files) {
    std::ofstream out(dir / name, std::ios::trunc);
    out << body;
    if (!out.good()) {
      return false;
    }
  }
  return true;
}

std::string DraAppEnv::CreateClaim(const std::string& name, const std::string& device,
                                   const json& config, const std::string& pod) {
  const std::string path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name;
  json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"devices",
         {{"requests", json::array({{{"name", "neuron"},
                                     {"exactly", {{"deviceClassName", "neuron.aws.com"}}}}})}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results", json::array({{{"request", "neuron"},
                                      {"driver", "neuron.aws.com"},
                                      {"pool", kNode},
                                      {"device", device}}})},
            {"config", config}}}}}}}};
  if (!pod.empty()) {
    claim["status"]["reservedFor"] = json::array(
        {{{"resource", "pods"}, {"name", pod}, {"uid", pod + "-uid"}, {"apiGroup", ""}}});
  }
  if (!fake_.Put(path, claim).ok()) return "";
  return fake_.Get(path)["metadata"]["uid"].get<std::string>();
}

}  // namespace neuron::dra::testing
