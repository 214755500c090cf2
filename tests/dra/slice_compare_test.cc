// Comparing rendered ResourceSlice specs with stored ones: taint times the server filled in.
#include "lib/dra/slice_compare.h"

#include <catch2/catch.hpp>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::dra {
namespace {

using nlohmann::json;

json Taint(const char* value, const char* time = nullptr) {
  json t = {{"key", "neuron.aws.com/unhealthy"}, {"value", value}, {"effect", "NoSchedule"}};
  if (time != nullptr) t["timeAdded"] = time;
  return t;
}

// Taints as a vector, not json: `{Taint(...)}` as a json parameter is an array under GCC but a
// copy of the one taint under clang (CWG 2137).
json Spec(std::vector<json> taints, bool v1beta1 = false) {
  json fields = {{"attributes", {{"deviceId", {{"int", 0}}}}}};
  if (!taints.empty()) fields["taints"] = std::move(taints);
  json device = v1beta1 ? json{{"name", "neurondevice0"}, {"basic", fields}} : fields;
  device["name"] = "neurondevice0";
  return {{"driver", "neuron.aws.com"}, {"devices", json::array({device})}};
}

TEST_CASE("a time the server added is no difference; any other field is") {
  const bool v1beta1 = GENERATE(false, true);
  const json rendered = Spec({Taint("x")}, v1beta1);
  CHECK(SameSliceSpec(rendered, rendered));
  CHECK(SameSliceSpec(rendered, Spec({Taint("x", "2025-01-01T00:00:00Z")}, v1beta1)));
  CHECK_FALSE(SameSliceSpec(rendered, Spec({Taint("y", "2025-01-01T00:00:00Z")}, v1beta1)));
  CHECK_FALSE(SameSliceSpec(rendered, Spec({}, v1beta1)));
  // A time we set ourselves must match exactly.
  CHECK_FALSE(SameSliceSpec(Spec({Taint("x", "2025-01-01T00:00:00Z")}, v1beta1),
                            Spec({Taint("x", "2025-02-01T00:00:00Z")}, v1beta1)));
  CHECK_FALSE(SameSliceSpec(rendered, json("garbage")));
  CHECK_FALSE(SameSliceSpec(rendered, json{{"devices", {1, 2}}}));
}

TEST_CASE("re-applied taints keep their stored time; new ones get none") {
  const bool v1beta1 = GENERATE(false, true);
  json rendered = Spec({Taint("x"), Taint("y")}, v1beta1);
  KeepTaintTimes(rendered, Spec({Taint("x", "2025-01-01T00:00:00Z")}, v1beta1));
  CHECK(rendered == Spec({Taint("x", "2025-01-01T00:00:00Z"), Taint("y")}, v1beta1));

  json untouched = Spec({Taint("x")}, v1beta1);
  KeepTaintTimes(untouched, json::object());
  KeepTaintTimes(untouched, json{{"devices", {"not a device"}}});
  CHECK(untouched == Spec({Taint("x")}, v1beta1));
}

}  // namespace
}  // namespace neuron::dra
