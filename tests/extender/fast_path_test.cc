// File: tests/extender/fast_path_test.cc
// The filter/prioritize fast paths give the answers the plain ones give: the lock-free decision
// memo, the /filter answer written straight from the verdicts, the parsed-pod cache, and the
// cached snapshots, which a node or pod update from the watch must invalidate.
#include <string>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/extender/decide.h"
#include "lib/extender/decision_memo.h"
#include "lib/extender/filter_answer.h"
#include "lib/extender/wire.h"
#include "tests/extender/view_test_util.h"

namespace neuron::extender::testutil {
namespace {

std::string Args(const json& pod, const json& names) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

// The /filter answer both ways: they must be the same bytes.
std::string FilterBothWays(const ClusterView& v, const std::string& body) {
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(body);
  REQUIRE(args.ok());
  const std::string plain = EncodeFilterResult(Filter(v, *args));
  const std::string fast = EncodeFilterAnswer(*args, DecideFilter(v, *args));
  CHECK(fast == plain);
  return fast;
}

TEST_CASE("decision memo: slots, overflow, first insert wins", "[extender][memo]") {
  DecisionMemo m;
  CHECK(m.FindVerdict(1, 0) == nullptr);
  CHECK(m.FindScore(1, 0, 0) == -1);
  for (int n = 1; n <= 20; ++n) {  // more sizes than the lock-free slots
    const Verdict& v = m.AddVerdict(n, 0, Verdict{n % 2 == 0, false, "", "x"});
    CHECK(&v == m.FindVerdict(n, 0));
    m.AddScore(n, 0, 1, n % 11);
  }
  for (int n = 1; n <= 20; ++n) {
    REQUIRE(m.FindVerdict(n, 0) != nullptr);
    CHECK(m.FindVerdict(n, 0)->fits == (n % 2 == 0));
    CHECK(m.FindScore(n, 0, 1) == n % 11);
    CHECK(m.FindScore(n, 0, 0) == -1);      // policy is part of the key
    CHECK(m.FindVerdict(0, n) == nullptr);  // and the kind
  }
  const Verdict& again = m.AddVerdict(2, 0, Verdict{false, true, "other", "y"});
  CHECK(again.fits);  // the first one stays
  m.AddScore(2, 0, 1, 7);
  CHECK(m.FindScore(2, 0, 1) == 2);
  CHECK(m.FindScore(0, 0, 1) == -1);  // a zero score key is not an empty slot
  m.AddScore(0, 0, 1, 0);
  CHECK(m.FindScore(0, 0, 1) == 0);
}

TEST_CASE("decision memo: concurrent readers and writers agree", "[extender][memo]") {
  DecisionMemo m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m] {
      for (int round = 0; round < 200; ++round) {
        for (int n = 1; n <= 12; ++n) {
          const Verdict* v = m.FindVerdict(0, n);
          if (!v) v = &m.AddVerdict(0, n, Verdict{true, false, "", std::to_string(n)});
          REQUIRE(v->category == std::to_string(n));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST_CASE("filter answer: same bytes as the encoded FilterResult", "[extender][filter]") {
  ClusterView v;
  v.UpsertNode(Node("t1", "trn1.32xlarge", 16, 32));
  v.UpsertNode(Node("t2", "trn1.32xlarge", 16, 32));
  v.UpsertNode(Node("small", "inf2.xlarge", 1, 2));
  v.UpsertNode(Node("cpu", ""));
  v.UpsertPod(Pod("busy", kDev, 16, "t2", "0-15"));
  const json names = {"t2", "t1", "small", "cpu", "ghost", "t2", "b\"q", "small"};
  for (const json& pod :
       {Pod("p", kDev, 4), Pod("q", kCore, 2), Pod("r", kDev, 3), Pod("none", "cpu", 1)}) {
    FilterBothWays(v, Args(pod, names));
  }
  FilterBothWays(v, Args(Pod("p", kDev, 4), json::array()));
  const std::string out = FilterBothWays(v, Args(Pod("p", kDev, 4), names));
  CHECK(out.find("\"NodeNames\":[\"t1\"]") != std::string::npos);

  // Full-Nodes mode: passing Node objects echoed verbatim.
  json items = json::array({Node("t1", "trn1.32xlarge", 16, 32), Node("t2", "trn1.32xlarge")});
  const std::string full = json{
      {"Pod", Pod("p", kDev, 4)},
      {"Nodes", {{"items", items}}},
      {"NodeNames", nullptr}}.dump();
  FilterBothWays(v, full);
}

TEST_CASE("cached snapshots: a watch update changes the next verdict", "[extender][filter]") {
  ClusterView v;
  v.UpsertNode(Node("t", "trn1.32xlarge", 16, 32));
  const std::string body = Args(Pod("p", kDev, 8), json::array({"t"}));
  CHECK(FilterBothWays(v, body).find("\"NodeNames\":[\"t\"]") != std::string::npos);

  // A pod bound there (pod watch): 8 of 16 left, then none.
  v.UpsertPod(Pod("a", kDev, 8, "t", "0-7"));
  CHECK(FilterBothWays(v, body).find("\"NodeNames\":[\"t\"]") != std::string::npos);
  v.UpsertPod(Pod("b", kDev, 8, "t", "8-15"));
  CHECK(FilterBothWays(v, body).find("0 of 16 devices free; asked 8") != std::string::npos);
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(body);
  REQUIRE(args.ok());
  CHECK(Scores(v, *args, Policy::kBinpack) == std::vector<int>{0});

  // The pod goes (pod watch): fits again.
  v.DeletePod(Pod("b", kDev, 8, "t", "8-15"));
  CHECK(FilterBothWays(v, body).find("\"NodeNames\":[\"t\"]") != std::string::npos);
  CHECK(Scores(v, *args, Policy::kBinpack)[0] > 0);

  // The node update (node watch) reports only 8 devices healthy: 8 held, asking 8 more fails.
  v.UpsertNode(Node("t", "trn1.32xlarge", 8, 16));
  CHECK(FilterBothWays(v, body).find("only 8 of 16 devices healthy") != std::string::npos);
  // And the node's deletion makes it unknown.
  v.DeleteNode("t");
  CHECK(FilterBothWays(v, body).find("not in the extender's cache") != std::string::npos);
}

}  // namespace
}  // namespace neuron::extender::testutil

namespace neuron::extender::testutil {
namespace {

TEST_CASE("pod cache: the same pod text parses to the same pod, once", "[extender][podcache]") {
  PodCache cache(2);
  const std::string a = Args(Pod("a", kDev, 4), json::array({"n"}));
  absl::StatusOr<ExtenderArgs> plain = DecodeExtenderArgs(a);
  absl::StatusOr<ExtenderArgs> first = DecodeExtenderArgs(a, &cache);
  absl::StatusOr<ExtenderArgs> again = DecodeExtenderArgs(a, &cache);
  REQUIRE((plain.ok() && first.ok() && again.ok()));
  CHECK(cache.size() == 1);
  for (const ExtenderArgs* x : {&*first, &*again}) {
    CHECK(x->pod.Key() == plain->pod.Key());
    CHECK(x->pod.uid == plain->pod.uid);
    CHECK(x->pod.request == plain->pod.request);
  }
  // Any change to the pod is a new entry: its new request is read.
  const std::string b = Args(Pod("a", kDev, 8), json::array({"n"}));
  absl::StatusOr<ExtenderArgs> bigger = DecodeExtenderArgs(b, &cache);
  REQUIRE(bigger.ok());
  CHECK(bigger->pod.request.devices == 8);
  CHECK(cache.size() == 2);
  // The oldest goes when full; a bad pod is an error and is not kept.
  const std::string c = Args(Pod("c", kCore, 2), json::array());
  REQUIRE(DecodeExtenderArgs(c, &cache).ok());
  CHECK(cache.size() == 2);
  json bad = Pod("bad", kDev, 1);
  bad["spec"]["containers"][0]["resources"]["requests"][kDev] = "-1";
  const std::string bad_body = Args(bad, json::array());
  CHECK_FALSE(DecodeExtenderArgs(bad_body, &cache).ok());
  CHECK(cache.size() == 2);
  CHECK(DecodeExtenderArgs(a, &cache)->pod.request.devices == 4);
}

}  // namespace
}  // namespace neuron::extender::testutil
