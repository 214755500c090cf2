// File: tests/fakes/kubelet/dra_fake_kubelet_state.h
// Internal to the fake DRA kubelet (dra_fake_kubelet.cc: plugin watcher and registration;
// dra_fake_kubelet_calls.cc: NodePrepareResources / NodeUnprepareResources).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

namespace neuron::fakes {

struct DraPlugin {
  DraRegistration reg;
  std::shared_ptr<grpc::Channel> channel;  // to reg.endpoint
};

struct FakeDraKubelet::State {
  DraKubeletVersion version;
  std::string registrar_dir;

  mutable absl::Mutex mu;
  std::map<std::string, std::shared_ptr<DraPlugin>> plugins ABSL_GUARDED_BY(mu);  // by driver
  std::vector<std::string> errors ABSL_GUARDED_BY(mu);
  int registrations ABSL_GUARDED_BY(mu) = 0;

  // Watcher thread only: registration sockets not (yet) registered -> next attempt.
  std::map<std::string, absl::Time> pending;
  std::atomic<bool> stopping{false};
  std::thread watcher;

  void Watch(int fd);
  void Attempt(const std::string& socket_path);
  // Empty on success; else the refusal (already sent to the plugin where the kubelet sends it).
  std::string Register(const std::string& socket_path);
  void Deregister(const std::string& socket_path);
  std::shared_ptr<DraPlugin> Find(const std::string& driver) const;
};

}  // namespace neuron::fakes
