// File: tests/fakes/kubelet/dra_fake_kubelet.h
// A fake kubelet for DRA kubelet plugins, speaking the real protocols on real unix sockets, as
// the 1.34 kubelet (pluginmanager + cm/dra/plugin) does, or a 1.32/1.33 kubelet:
//   * plugin watcher: watches <dir>/plugins_registry with inotify (and lists it at Start, as
//     the kubelet does after a restart); a new socket whose name does not start with "." is
//     registered: dial, GetInfo (1 s deadline), type must be "DRAPlugin", an empty endpoint
//     means the registration socket itself, supported_versions must name a service this
//     kubelet speaks (1.34: the plugin's first entry among v1.DRAPlugin/v1beta1.DRAPlugin;
//     1.32/1.33: v1beta1.DRAPlugin), an endpoint already registered for the driver is refused;
//     then NotifyRegistrationStatus(true) -- or (false, error) for every refusal;
//   * a failed registration is retried every second while the socket exists; a deleted
//     registration socket deregisters the driver;
//   * NodePrepareResources / NodeUnprepareResources on the registered endpoint with the chosen
//     service (or a forced one), checking the answer as the kubelet does (no unknown claim
//     UIDs, none skipped); per-claim errors are returned for the test to inspect.
// Deviation: the dial timeout is 2 s (kubelet: 10 s) to keep failing tests short.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace neuron::fakes {

// Which kubelet the fake plays; they differ in which DRA gRPC services they speak and in
// whose order decides between them.
enum class DraKubeletVersion {
  k1_34,  // v1.DRAPlugin and v1beta1.DRAPlugin; the plugin's list order decides
  k1_33,  // (and 1.32) v1beta1.DRAPlugin only (v1alpha4 is not modelled)
};

enum class DraApi { kChosen, kV1, kV1beta1 };

struct DraClaim {
  std::string ns, name, uid;
};

struct DraDevice {
  std::vector<std::string> request_names;
  std::string pool, device;
  std::vector<std::string> cdi_device_ids;
};

// One entry of NodePrepareResourcesResponse.claims.
struct DraPrepared {
  std::vector<DraDevice> devices;
  std::string error;
};

// A plugin the fake has registered.
struct DraRegistration {
  std::string socket_path;  // registration socket
  std::string type, name, endpoint;
  std::vector<std::string> supported_versions;
  std::string chosen_service;  // "v1.DRAPlugin" or "v1beta1.DRAPlugin"
};

class FakeDraKubelet {
 public:
  explicit FakeDraKubelet(DraKubeletVersion version = DraKubeletVersion::k1_34);
  ~FakeDraKubelet();  // Stop() and remove the directory
  FakeDraKubelet(const FakeDraKubelet&) = delete;
  FakeDraKubelet& operator=(const FakeDraKubelet&) = delete;

  // Lists and then watches plugins_registry on a thread.
  absl::Status Start();
  // Stops watching and forgets every registration (sockets stay, as with a stopped kubelet).
  void Stop();
  // Stop + Start: re-registers every socket present, as a restarted kubelet does.
  absl::Status Restart();

  const std::string& dir() const { return dir_; }  // mkdtemp, short enough for sun_path
  std::string registrar_dir() const { return dir_ + "/plugins_registry"; }
  std::string plugins_dir() const { return dir_ + "/plugins"; }
  // Deletes every unix socket in plugins_registry (what a kubelet cleanup would do).
  int DeleteRegistrationSockets();

  // --- registration ---
  int registration_count() const;  // successful registrations since construction
  bool WaitForRegistrations(int count, absl::Duration timeout) const;
  std::optional<DraRegistration> registration(const std::string& driver) const;
  bool WaitForDeregistration(const std::string& driver, absl::Duration timeout) const;
  // Every refusal so far, in the kubelet's words (also sent to the plugin).
  std::vector<std::string> registration_errors() const;
  bool WaitForRegistrationErrors(int count, absl::Duration timeout) const;

  // --- DRA calls on a registered driver ---
  // Per claim UID. An RPC error, an unknown UID or a skipped claim fail the call (the kubelet
  // then fails the pod's preparation) with the kubelet's message.
  absl::StatusOr<std::map<std::string, DraPrepared>> NodePrepareResources(
      const std::string& driver, const std::vector<DraClaim>& claims, DraApi api = DraApi::kChosen);
  // Per claim UID: the error string ("" = unprepared).
  absl::StatusOr<std::map<std::string, std::string>> NodeUnprepareResources(
      const std::string& driver, const std::vector<DraClaim>& claims, DraApi api = DraApi::kChosen);

  struct State;  // internal; public only for the .cc files

 private:
  std::string dir_;
  std::unique_ptr<State> state_;
};

}  // namespace neuron::fakes
