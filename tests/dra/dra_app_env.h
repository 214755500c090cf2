// File: tests/dra/dra_app_env.h
// A DraApp running in-process on an emulated node, against the fake apiserver (over real HTTP)
// and the fake DRA kubelet (real unix sockets): what the DRA end-to-end test and bench share.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "lib/dra/dra_app.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

namespace neuron::dra::testing {

inline constexpr char kNode[] = "ip-10-0-0-1.ec2.internal";

struct DraAppEnvOptions {
  std::string shape = "trn2.48xlarge";
  bool device_taints = false;
  bool partitionable = false;
  absl::Duration health_interval = absl::Milliseconds(20);
  absl::Duration healthy_after = absl::Milliseconds(300);
  absl::Duration resync = absl::Minutes(10);
  nlohmann::json node_labels = nlohmann::json::object();  // on the node's Node object
  CacheMounts* cache_mounts = nullptr;                    // DraAppOptions::cache_mounts; not owned
};

class DraAppEnv {
 public:
  explicit DraAppEnv(DraAppEnvOptions opts = {});
  ~DraAppEnv();  // stops the app

  // Starts the app on a thread; false when a fake failed to start.
  bool Start();
  absl::Status Stop();  // the app's Run() result

  // Slice 0 of the node's pool as stored (null while absent).
  nlohmann::json Slice() const;
  // The device of slice 0 named `name`, or null.
  nlohmann::json Device(const std::string& name) const;
  // Raises device `d`'s first uncorrectable counter to `value` in the emulated tree.
  bool WriteFault(int d, uint64_t value) const;
  // Writes files of the emulated class directory sys/class/neuron_device/ (name -> contents),
  // e.g. an UltraServer identity (lib/ultraserver/emulation.h).
  bool WriteClassAttributes(const std::map<std::string, std::string>& files) const;
  // Stores an allocated ResourceClaim for `device` (e.g. "neurondevice0") with `config`
  // (status.allocation.devices.config), reserved for pod `pod` when not empty; its UID.
  std::string CreateClaim(const std::string& name, const std::string& device,
                          const nlohmann::json& config = nlohmann::json::array(),
                          const std::string& pod = "");

  std::string dir() const { return dir_; }
  std::string cdi_root() const { return dir_ + "/cdi"; }
  std::string host_root() const { return dir_ + "/host"; }
  int metrics_port() const { return app_ ? app_->metrics_port() : 0; }
  fakes::FakeApiServer& apiserver() { return fake_; }
  fakes::FakeDraKubelet& kubelet() { return kubelet_; }

 private:
  DraAppEnvOptions opts_;
  std::string dir_;
  fakes::FakeApiServer fake_;
  fakes::FakeDraKubelet kubelet_;
  std::shared_ptr<k8s::RestClient> client_;
  std::unique_ptr<DraApp> app_;
  absl::Notification stop_;
  std::thread runner_;
  absl::Status result_;
};

}  // namespace neuron::dra::testing
