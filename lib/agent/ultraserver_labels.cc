// File: lib/agent/ultraserver_labels.cc
// The UltraServer label merge patch and its one-line description (ultraserver_labels.h).
#include "lib/agent/ultraserver_labels.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_access.h"
#include "lib/ultraserver/labels.h"

namespace neuron::agent {

nlohmann::json UltraServerLabelPatch(const std::optional<ultraserver::Identity>& id) {
  nlohmann::json labels = nlohmann::json::object();
  for (const std::string& key : ultraserver::AllLabelKeys()) labels[key] = nullptr;
  if (id) {
    for (const auto& [key, value] : ultraserver::IdentityLabels(*id)) labels[key] = value;
  }
  return {{"metadata", {{"labels", std::move(labels)}}}};
}

bool NodeCarries(const nlohmann::json& node, const nlohmann::json& patch) {
  const nlohmann::json& have = MemberOrNull(node, {"metadata", "labels"});
  const nlohmann::json& want = MemberOrNull(patch, {"metadata", "labels"});
  if (!want.is_object()) return true;
  for (const auto& [key, value] : want.items()) {
    const nlohmann::json& current = have.is_object() ? MemberOrNull(have, key) : have;
    if (value.is_null() ? !current.is_null() : current != value) return false;
  }
  return true;
}

std::string DescribeUltraServerLabels(const std::optional<ultraserver::Identity>& id) {
  if (!id) return "none";
  const ultraserver::LabelList labels = ultraserver::IdentityLabels(*id);
  if (labels.empty()) return "none";
  return absl::StrJoin(labels, " ", absl::PairFormatter("="));
}

}  // namespace neuron::agent
