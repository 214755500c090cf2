// File: tests/fakes/kubelet/fake_kubelet.h
// A fake kubelet speaking the real device-plugin protocol on real unix sockets:
//   * serves v1beta1.Registration on <dir>/kubelet.sock (dir = mkdtemp under /tmp, so socket
//     paths stay far below the 108-byte sun_path limit);
//   * validates Register like the kubelet (version, extended resource name), dials the plugin
//     back synchronously and calls GetDevicePluginOptions inside Register, then opens
//     ListAndWatch on its own thread and records every update;
//   * drives GetPreferredAllocation / Allocate as the kubelet would;
//   * restarts like the kubelet: stop, delete every unix socket in the directory (skipping
//     directories, other files and kubelet_internal_checkpoint), re-create kubelet.sock;
//   * admits pods' containers like the kubelet (per-resource accounting, GetPreferredAllocation,
//     Allocate) and creates them like containerd would: every DeviceSpec host_path must be a
//     character device on this host (lstat), else CreateContainerError;
//   * serves PodResources v1 (List, GetAllocatableResources) on <dir>/pod-resources/kubelet.sock
//     (a sub-directory, which a restart does not clean): what it admitted, per pod, container and
//     resource, until the pod is removed, plus settable extra contents.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/deviceplugin/v1beta1/api.pb.h"
#include "proto/podresources/v1/api.pb.h"

namespace neuron::fakes {

class FakeKubelet {
 public:
  FakeKubelet();   // creates the directory; does not serve yet
  ~FakeKubelet();  // stops and removes the directory
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  absl::Status Start();    // serve Registration on kubelet.sock
  void Stop();             // stop serving, close every plugin stream (kubelet.sock file stays)
  absl::Status Restart();  // Stop + CleanupPluginDirectory + Start

  const std::string& dir() const { return dir_; }
  std::string kubelet_socket() const { return dir_ + "/kubelet.sock"; }

  // --- registration ---
  int registration_count() const;
  std::vector<v1beta1::RegisterRequest> registrations() const;
  // True once registration_count() >= count.
  bool WaitForRegistrations(int count, absl::Duration timeout) const;
  std::optional<v1beta1::DevicePluginOptions> options(const std::string& resource) const;

  // --- ListAndWatch (per resource name) ---
  std::optional<v1beta1::ListAndWatchResponse> LatestDevices(const std::string& resource) const;
  int update_count(const std::string& resource) const;
  // Waits until the latest list of `resource` satisfies `pred`.
  bool WaitForDevices(const std::string& resource,
                      const std::function<bool(const v1beta1::ListAndWatchResponse&)>& pred,
                      absl::Duration timeout) const;
  // True while a ListAndWatch stream of `resource` is open.
  bool StreamOpen(const std::string& resource) const;

  // --- act as the kubelet on a registered endpoint ---
  absl::StatusOr<v1beta1::PreferredAllocationResponse> GetPreferredAllocation(
      const std::string& resource, const v1beta1::PreferredAllocationRequest& req);
  absl::StatusOr<v1beta1::AllocateResponse> Allocate(const std::string& resource,
                                                     const v1beta1::AllocateRequest& req);

  // --- pods, as the kubelet admits them (recorded for PodResources List) ---
  struct ContainerRef {
    std::string ns, pod, container;
  };
  // One container's admission with chosen `ids`: Allocate; on success the IDs are recorded for
  // PodResources (as the kubelet does once Allocate returns, even if the container then fails
  // to start), then the runtime check: every DeviceSpec host_path must exist on this host and
  // be a character device, else FailedPrecondition("CreateContainerError: lstat <path>: ...").
  absl::StatusOr<v1beta1::AllocateResponse> AllocateFor(const ContainerRef& c,
                                                        const std::string& resource,
                                                        const std::vector<std::string>& ids);
  // The kubelet's own path for `count` IDs of `resource`: candidates are the IDs Healthy in the
  // latest ListAndWatch and not held by another admitted container of the same resource (the
  // kubelet accounts per resource only); GetPreferredAllocation when the plugin offers it (its
  // answer intersected with the candidates, the rest filled in order), then AllocateFor.
  absl::StatusOr<v1beta1::AllocateResponse> Admit(const ContainerRef& c,
                                                  const std::string& resource, int count);
  // The pod ended: PodResources stops listing it and its IDs are free again.
  void RemovePod(const std::string& ns, const std::string& pod);
  // IDs of `resource` held by admitted containers, sorted numerically.
  std::vector<std::string> Held(const std::string& resource) const;

  // --- PodResources v1 ---
  absl::Status StartPodResources();
  std::string pod_resources_socket() const { return dir_ + "/pod-resources/kubelet.sock"; }
  // Extra pods listed before the admitted ones (e.g. pods admitted by a previous kubelet).
  void SetPodResources(const v1::ListPodResourcesResponse& resp);
  void SetAllocatable(const v1::AllocatableResourcesResponse& resp);
  int pod_resources_list_calls() const;

  struct State;  // internal, public only for the .cc's service classes

 private:
  std::string dir_;
  std::unique_ptr<State> state_;
};

}  // namespace neuron::fakes
