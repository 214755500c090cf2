// File: tests/operator/device_config_drain_test.cc
// spec.upgradePolicy.drain: parsing, and which pods a drain moves.
#include "lib/operator/device_config_drain.h"

#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"

namespace neuron::op {
namespace {

using nlohmann::json;

json Pod(const json& limits, const json& extra = json::object()) {
  json p = {{"metadata", {{"name", "p"}, {"namespace", "n"}}},
            {"spec", {{"containers", {{{"name", "c"}, {"resources", {{"limits", limits}}}}}}}},
            {"status", {{"phase", "Running"}}}};
  p.merge_patch(extra);
  return p;
}

TEST_CASE("drain policy: defaults, values and clear errors", "[operator][drain]") {
  DrainPolicy p;
  std::vector<FieldError> problems;
  internal::ReadDrainPolicy(json::object(), p, problems);
  CHECK(problems.empty());
  CHECK_FALSE(p.enable);
  CHECK(p.timeout == absl::Minutes(10));
  internal::ReadDrainPolicy({{"enable", true},
                             {"timeout", "1h"},
                             {"podSelector", {{"app", "x"}}},
                             {"deleteEmptyDirData", true},
                             {"force", true}},
                            p, problems);
  CHECK(problems.empty());
  CHECK((p.enable && p.force && p.delete_emptydir_data));
  CHECK(p.timeout == absl::Hours(1));
  CHECK(p.pod_selector == std::map<std::string, std::string>{{"app", "x"}});
  DrainPolicy bad;
  internal::ReadDrainPolicy(
      {{"enable", "yes"}, {"timeout", "0s"}, {"podSelector", {{"app", 3}}}, {"force", 1}}, bad,
      problems);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].field == "spec.upgradePolicy.drain.enable");
  CHECK(problems[2].field == "spec.upgradePolicy.drain.timeout");
  CHECK(problems[3].field == "spec.upgradePolicy.drain.podSelector[app]");
}

TEST_CASE("drain moves Neuron pods only, never DaemonSet, mirror or finished ones",
          "[operator][drain]") {
  const DrainPolicy p;
  CHECK(DrainsPod(Pod({{"aws.amazon.com/neuroncore", "2"}}), p));
  CHECK(DrainsPod(Pod({{"aws.amazon.com/neuron", "1"}}), p));
  CHECK_FALSE(DrainsPod(Pod({{"cpu", "1"}}), p));
  CHECK(DrainsPod(Pod({{"cpu", "1"}}, {{"spec", {{"resourceClaims", {{{"name", "n"}}}}}}}), p));
  CHECK_FALSE(DrainsPod(
      Pod({{"aws.amazon.com/neuron", "1"}},
          {{"metadata", {{"ownerReferences", {{{"kind", "DaemonSet"}, {"name", "ds"}}}}}}}),
      p));
  CHECK_FALSE(
      DrainsPod(Pod({{"aws.amazon.com/neuron", "1"}},
                    {{"metadata", {{"annotations", {{"kubernetes.io/config.mirror", "x"}}}}}}),
                p));
  CHECK_FALSE(
      DrainsPod(Pod({{"aws.amazon.com/neuron", "1"}}, {{"status", {{"phase", "Succeeded"}}}}), p));
  DrainPolicy by_label;
  by_label.pod_selector = {{"app", "train"}};
  CHECK_FALSE(DrainsPod(Pod({{"aws.amazon.com/neuron", "1"}}), by_label));
  CHECK(DrainsPod(Pod({{"cpu", "1"}}, {{"metadata", {{"labels", {{"app", "train"}}}}}}), by_label));

  const json with_scratch =
      Pod({{"aws.amazon.com/neuron", "1"}},
          {{"spec", {{"volumes", {{{"name", "scratch"}, {"emptyDir", json::object()}}}}}}});
  CHECK(EvictionBlocker(with_scratch, p).find("emptyDir volume \"scratch\"") != std::string::npos);
  DrainPolicy lose_data;
  lose_data.delete_emptydir_data = true;
  CHECK(EvictionBlocker(with_scratch, lose_data).empty());
}

}  // namespace
}  // namespace neuron::op
