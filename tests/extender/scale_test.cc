// File: tests/extender/scale_test.cc
// In-process scale check of the decision path (no HTTP): 5,000 nodes of mixed shapes, 20,000
// bound pods, filter + prioritize of 500 NodeNames. Hidden ("[.scale]"): run it by hand with
// `extender_tests "[.scale]"`; it prints figures and asserts only on results, never on time.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/extender/cluster_view.h"
#include "lib/extender/decide.h"
#include "tests/extender/view_test_util.h"

namespace neuron::extender::testutil {
namespace {

TEST_CASE("5,000 nodes, 20,000 pods: filter + prioritize of 500 names", "[.scale]") {
  ClusterView v;
  const char* shapes[] = {"trn1.32xlarge", "inf2.48xlarge", "trn2.48xlarge", "inf2.24xlarge"};
  const int devices[] = {16, 12, 16, 6};
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) {
    const int s = i % 4;
    names.push_back("node-" + std::to_string(i));
    v.UpsertNode(Node(names.back(), shapes[s], devices[s], 0));
    for (int p = 0; p < 4; ++p) {  // one device per pod, devices 0..3 held
      v.UpsertPod(Pod("p-" + std::to_string(i) + "-" + std::to_string(p), kDev, 1, names.back(),
                      std::to_string(p)));
    }
  }
  REQUIRE(v.pod_count() == 20000);
  ExtenderArgs args;
  args.pod.ns = "ml";
  args.pod.name = "new";
  args.pod.request.devices = 4;
  args.node_names = std::vector<std::string_view>(names.begin(), names.begin() + 500);
  const int rounds = 200;
  size_t passed = 0;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    passed += Filter(v, args).node_names->size();
    passed += Prioritize(v, args, Policy::kBinpack).size();
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("filter+prioritize, 500 names: %.3f ms per pair (%d rounds)\n", ms / rounds, rounds);
  // Every node holds devices 0-3: of the 500 names (125 per shape) the inf2.24xlarge nodes
  // keep only 2 free devices and fail a 4-device request; the other 375 fit. Prioritize scores
  // every name it is given.
  CHECK(passed == static_cast<size_t>(rounds) * (375 + 500));
}

}  // namespace
}  // namespace neuron::extender::testutil
