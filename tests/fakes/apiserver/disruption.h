// File: tests/fakes/apiserver/disruption.h
// PodDisruptionBudget helpers shared by the disruption controller emulation (controllers.cc) and
// the pods/eviction subresource (api_evict.cc), after upstream's pkg/controller/disruption,
// component-helpers/apps/poddisruptionbudget and pkg/api/pod.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

// status.conditions type and reasons of a PodDisruptionBudget (policy/v1).
inline constexpr char kDisruptionAllowed[] = "DisruptionAllowed";
inline constexpr char kSufficientPods[] = "SufficientPods";
inline constexpr char kInsufficientPods[] = "InsufficientPods";
inline constexpr char kSyncFailed[] = "SyncFailed";
// How long an entry of status.disruptedPods keeps its pod out of currentHealthy (upstream's
// DeletionTimeout).
inline constexpr int64_t kDisruptedPodTimeoutSeconds = 120;

// Whether the budget's spec.selector selects the pod (same namespace is the caller's business).
// As metav1.LabelSelectorAsSelector: a missing or null selector selects nothing, {} everything,
// an invalid one nothing.
bool PdbSelectsPod(const json& pdb, const json& pod);
// False for a missing/null selector too; InvalidArgument names what is wrong with an invalid one.
absl::StatusOr<bool> PdbSelectorMatches(const json& pdb, const json& pod);

// podutil.IsPodReady: a Ready condition with status True.
bool IsPodReady(const json& pod);
// The ownerReference with controller: true, or null.
json ControllerRef(const json& obj);

// intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true): an integer as is, "N%" as
// ceil(N * total / 100). InvalidArgument (upstream's text) for anything else.
absl::StatusOr<int64_t> ScaledValue(const json& int_or_percent, int64_t total);

// An integer member of an object (0 when absent or not an integer).
int64_t IntMember(const json& obj, const char* key);

// apimeta.SetStatusCondition on status.conditions: replaces the condition of the same type,
// keeping its lastTransitionTime unless the status changes.
void SetCondition(json& status, json condition);
// pdbhelper.UpdateDisruptionAllowedCondition: DisruptionAllowed True/SufficientPods when
// status.disruptionsAllowed > 0, else False/InsufficientPods.
void UpdateDisruptionAllowedCondition(json& status);
// The condition of that type in status.conditions, or null.
json FindCondition(const json& status, const std::string& type);

// Whether a status.disruptedPods timestamp (RFC 3339) is older than kDisruptedPodTimeoutSeconds
// (an unparsable one counts as expired).
bool DisruptionExpired(const json& timestamp);

}  // namespace neuron::fakes::apiserver
