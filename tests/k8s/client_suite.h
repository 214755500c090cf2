// The client tests that also make sense on a real cluster. Each function takes a RestClient and
// a throw-away namespace; integration_test.cc runs them against the fake API server and, when
// NEURON_TEST_KUBECONFIG names a kubeconfig, against that cluster too.
#pragma once

#include <memory>
#include <string>

#include "lib/k8s/rest_client.h"

namespace neuron::k8s::suite {

// Creates namespace `ns` and deletes it (Background) on destruction.
class ScopedNamespace {
 public:
  ScopedNamespace(RestClient& client, std::string ns);
  ~ScopedNamespace();
  const std::string& name() const { return ns_; }

 private:
  RestClient& client_;
  std::string ns_;
};

void CrudAndErrors(RestClient& client, const std::string& ns);
void Paging(RestClient& client, const std::string& ns);
void ConflictRetry(RestClient& client, const std::string& ns);
void PatchesAndApply(RestClient& client, const std::string& ns);
void StatusSubresource(RestClient& client, const std::string& ns);
void WatchResume(RestClient& client, const std::string& ns);
void InformerBasics(RestClient& client, const std::string& ns);
void DiscoveryBasics(RestClient& client);
void EventsAggregate(RestClient& client, const std::string& ns);

// The spec.schedulerName of every Pod the suite creates: no such scheduler runs, so on a real
// cluster nobody binds (and so writes) the pod while a test works with it.
inline constexpr char kNoScheduler[] = "neuron-test-no-such-scheduler";

// A unique-ish suffix for names (time based).
std::string UniqueSuffix();

// A label unique to one test run. Tests select what they list and watch by it and never assume
// a namespace is empty: real clusters put ConfigMaps into every new namespace (kube-root-ca.crt;
// openshift-service-ca.crt on OpenShift), and the fake API server does the same.
struct RunLabel {
  static constexpr char kKey[] = "neuron.amazonaws.com/test-run";
  RunLabel();
  std::string Selector() const { return std::string(kKey) + "=" + value; }
  std::string value;
};

}  // namespace neuron::k8s::suite
