// File: tests/fakes/apiserver/disruption.cc
#include "tests/fakes/apiserver/disruption.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/fakes/apiserver/api_status.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {

absl::StatusOr<bool> PdbSelectorMatches(const json& pdb, const json& pod) {
  const json selector = pdb.value("/spec/selector"_json_pointer, json(nullptr));
  if (selector.is_null()) return false;
  absl::StatusOr<LabelSelector> sel = LabelSelector::FromObject(selector);
  if (!sel.ok()) return sel.status();
  return sel->Matches(pod.value("/metadata/labels"_json_pointer, json(nullptr)));
}

bool PdbSelectsPod(const json& pdb, const json& pod) {
  absl::StatusOr<bool> m = PdbSelectorMatches(pdb, pod);
  return m.ok() && *m;
}

bool IsPodReady(const json& pod) {
  const json conds = pod.value("/status/conditions"_json_pointer, json::array());
  if (!conds.is_array()) return false;
  for (const json& c : conds) {
    if (c.is_object() && c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

json ControllerRef(const json& obj) {
  const json refs = obj.value("/metadata/ownerReferences"_json_pointer, json::array());
  if (!refs.is_array()) return nullptr;
  for (const json& r : refs) {
    if (r.is_object() && r.value("controller", false)) return r;
  }
  return nullptr;
}

absl::StatusOr<int64_t> ScaledValue(const json& int_or_percent, int64_t total) {
  if (int_or_percent.is_number_integer()) return int_or_percent.get<int64_t>();
  if (!int_or_percent.is_string()) {
    return absl::InvalidArgumentError(
        "invalid value for IntOrString: invalid type: neither int nor percentage");
  }
  const std::string s = int_or_percent.get<std::string>();
  if (!absl::EndsWith(s, "%")) {
    return absl::InvalidArgumentError(
        "invalid value for IntOrString: invalid type: string is not a percentage");
  }
  int64_t percent = 0;
  if (!absl::SimpleAtoi(s.substr(0, s.size() - 1), &percent)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value for IntOrString: invalid value \"", s, "\""));
  }
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(percent) * static_cast<double>(total) / 100.0));
}

int64_t IntMember(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

json FindCondition(const json& status, const std::string& type) {
  const json conds = status.is_object() ? status.value("conditions", json::array()) : json();
  if (!conds.is_array()) return nullptr;
  for (const json& c : conds) {
    if (c.is_object() && c.value("type", "") == type) return c;
  }
  return nullptr;
}

void SetCondition(json& status, json condition) {
  json conds = status.value("conditions", json::array());
  if (!conds.is_array()) conds = json::array();
  const std::string type = condition.value("type", "");
  for (json& c : conds) {
    if (!c.is_object() || c.value("type", "") != type) continue;
    if (c.value("status", "") == condition.value("status", "") &&
        c.contains("lastTransitionTime")) {
      condition["lastTransitionTime"] = c["lastTransitionTime"];
    }
    c = std::move(condition);
    status["conditions"] = std::move(conds);
    return;
  }
  conds.push_back(std::move(condition));
  status["conditions"] = std::move(conds);
}

void UpdateDisruptionAllowedCondition(json& status) {
  const bool allowed = IntMember(status, "disruptionsAllowed") > 0;
  SetCondition(status, {{"type", kDisruptionAllowed},
                        {"status", allowed ? "True" : "False"},
                        {"observedGeneration", IntMember(status, "observedGeneration")},
                        {"lastTransitionTime", NowRfc3339()},
                        {"reason", allowed ? kSufficientPods : kInsufficientPods},
                        {"message", ""}});
}

bool DisruptionExpired(const json& timestamp) {
  absl::Time t;
  std::string err;
  if (!timestamp.is_string() ||
      !absl::ParseTime(absl::RFC3339_full, timestamp.get<std::string>(), &t, &err)) {
    return true;
  }
  return t + absl::Seconds(kDisruptedPodTimeoutSeconds) <= absl::Now();
}

}  // namespace neuron::fakes::apiserver
