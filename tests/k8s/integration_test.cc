// Client tests over real HTTP: each shared suite function runs against the fake API server and,
// when NEURON_TEST_KUBECONFIG names a kubeconfig, against that cluster too (own namespace).
#include <cstdlib>
#include <functional>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "lib/k8s/kubeconfig.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/k8s/client_suite.h"

namespace neuron::k8s {
namespace {

using SuiteFn = std::function<void(RestClient&, const std::string&)>;

std::unique_ptr<RestClient> FakeClient(const fakes::FakeApiServer& fake) {
  ClientConfig cfg;
  cfg.server = fake.url();
  auto t = NewTransport(cfg, {}, {.max_attempts = 3});
  REQUIRE(t.ok());
  return std::make_unique<RestClient>(*t);
}

void RunEverywhere(const SuiteFn& fn) {
  {
    INFO("target: fake API server");
    fakes::FakeApiServer fake;
    REQUIRE(fake.Start().ok());
    auto client = FakeClient(fake);
    suite::ScopedNamespace ns(*client, "suite-" + suite::UniqueSuffix());
    fn(*client, ns.name());
  }
  const char* kc = std::getenv("NEURON_TEST_KUBECONFIG");
  if (kc == nullptr || *kc == '\0') {
    WARN("real cluster part skipped: NEURON_TEST_KUBECONFIG is not set");
    return;
  }
  INFO("target: cluster from NEURON_TEST_KUBECONFIG=" << kc);
  auto cfg = LoadKubeconfig(kc);
  REQUIRE(cfg.ok());
  auto t = NewTransport(*cfg);
  REQUIRE(t.ok());
  RestClient client(*t, cfg->default_namespace);
  suite::ScopedNamespace ns(client, "neuron-k8s-test-" + suite::UniqueSuffix());
  fn(client, ns.name());
}

TEST_CASE("suite: CRUD and error mapping", "[suite]") { RunEverywhere(suite::CrudAndErrors); }
TEST_CASE("suite: paging and selectors", "[suite]") { RunEverywhere(suite::Paging); }
TEST_CASE("suite: 409 conflict retry", "[suite]") { RunEverywhere(suite::ConflictRetry); }
TEST_CASE("suite: merge/JSON patch and server-side apply", "[suite]") {
  RunEverywhere(suite::PatchesAndApply);
}
TEST_CASE("suite: status subresource and annotation patch", "[suite]") {
  RunEverywhere(suite::StatusSubresource);
}
TEST_CASE("suite: watch and resume from the last resourceVersion", "[suite]") {
  RunEverywhere(suite::WatchResume);
}
TEST_CASE("suite: informer add/update/delete, transform, index, prompt stop", "[suite]") {
  RunEverywhere(suite::InformerBasics);
}
TEST_CASE("suite: discovery", "[suite]") {
  RunEverywhere([](RestClient& c, const std::string&) { suite::DiscoveryBasics(c); });
}
TEST_CASE("suite: events are aggregated", "[suite]") { RunEverywhere(suite::EventsAggregate); }

}  // namespace
}  // namespace neuron::k8s
