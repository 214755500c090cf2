// File: tests/extender/view_feed_test.cc
// ViewFeed against the fake kube-apiserver over real HTTP: the first list fills the view, watch
// events update it, and a delete missed while the watch was down (410 on resume) is applied by
// the relist (as is a pod that finished meanwhile). Catch2 assertions stay on the main thread.
#include "lib/extender/view_feed.h"

#include <memory>

#include "catch2/catch.hpp"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/subprocess.h"

namespace neuron::extender::testutil {
namespace {

using neuron::testing::Eventually;

std::string PodPath(const std::string& name) { return "/api/v1/namespaces/ml/pods/" + name; }

TEST_CASE("view feed: list, watch, and a relist that applies a missed delete", "[extender][feed]") {
  fakes::FakeApiServer api;
  REQUIRE(api.Start().ok());
  REQUIRE(api.Put("/api/v1/nodes/t", Node("t", "trn1.32xlarge", 16, 32)).ok());
  REQUIRE(api.Put(PodPath("a"), Pod("a", kDev, 4, "t", "0-3")).ok());
  REQUIRE(api.Put(PodPath("b"), Pod("b", kDev, 4, "t", "4-7")).ok());
  k8s::ClientConfig cfg;
  cfg.server = api.url();
  k8s::RetryOptions retry;
  retry.max_attempts = 1;
  auto transport = k8s::NewTransport(cfg, {}, retry);
  REQUIRE(transport.ok());
  k8s::RestClient client(*transport);
  ClusterView view;
  ViewFeed nodes(client, view, ViewFeed::Source::kNodes);
  ViewFeed pods(client, view, ViewFeed::Source::kPods);
  nodes.Start();
  pods.Start();
  REQUIRE(Eventually([&] { return nodes.synced() && pods.synced(); }));
  CHECK(view.node_count() == 1);
  CHECK(view.pod_count() == 2);

  REQUIRE(api.Put(PodPath("c"), Pod("c", kCore, 2, "t", "16,17")).ok());
  REQUIRE(Eventually([&] { return view.pod_count() == 3; }));

  // The watch drops, its next attempts fail, pod a is deleted and history compacted meanwhile:
  // the resumed watch gets 410 and the relist must drop a.
  api.InjectError("GET", "/api/v1/pods", 503, 3);
  api.CloseWatches();
  REQUIRE(client.Delete(k8s::resources::kPods, "ml", "a").ok());
  json done = api.Get(PodPath("b"));
  done["status"]["phase"] = "Succeeded";  // a finished pod holds nothing either
  REQUIRE(api.Put(PodPath("b"), done).ok());
  api.Compact();
  REQUIRE(Eventually([&] { return view.pod_count() == 1; }, absl::Seconds(20)));
  std::optional<NodeState> st = view.State("t");
  REQUIRE(st.has_value());
  CHECK(st->free_devices[0]);        // a's devices are free again
  CHECK(st->free_devices[4]);        // and b's
  CHECK_FALSE(st->free_devices[8]);  // c holds cores of device 8
  nodes.Stop();
  pods.Stop();
}

}  // namespace
}  // namespace neuron::extender::testutil
