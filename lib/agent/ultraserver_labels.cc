// File: lib/agent/ultraserver_labels.cc
// The UltraServer label merge patch and its one-line description (ultraserver_labels.h).
#include "lib/agent/ultraserver_labels.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::string DescribeUltraServerLabels(const std::optional<ultraserver::Identity>& id) {
  if (!id) return "none";
  const ultraserver::LabelList labels = ultraserver::IdentityLabels(*id);
  if (labels.empty()) return "none";
  return absl::StrJoin(labels, " ", absl::PairFormatter("="));
}

}  // namespace neuron::agent
