// File: lib/k8s/conditions.h
// metav1.Condition helpers for status.conditions (a list-map keyed by type).
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

struct Condition {
  std::string type{};    // CamelCase or foo.example.com/CamelCase, <= 316 chars
  std::string status{};  // True | False | Unknown
  int64_t observed_generation = 0;
  absl::Time last_transition_time = absl::UnixEpoch();
  std::string reason{};   // ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, 1..1024
  std::string message{};  // <= 32768

  nlohmann::json ToJson() const;
  static absl::StatusOr<Condition> FromJson(const nlohmann::json& j);
};

absl::Status ValidateCondition(const Condition& c);

// Sets `c` in `conditions` (a JSON array; null becomes an array). lastTransitionTime becomes
// `now` when the type is new or its status changed, and is kept otherwise. Returns whether
// anything changed, or InvalidArgument.
absl::StatusOr<bool> SetCondition(nlohmann::json& conditions, Condition c, absl::Time now);
std::optional<Condition> FindCondition(const nlohmann::json& conditions, const std::string& type);
bool IsConditionTrue(const nlohmann::json& conditions, const std::string& type);
// Removes the condition of `type`; returns whether it existed.
bool RemoveCondition(nlohmann::json& conditions, const std::string& type);

}  // namespace neuron::k8s
