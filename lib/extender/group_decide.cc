// File: lib/extender/group_decide.cc
#include "lib/extender/group_decide.h"

#include "absl/strings/str_cat.h"
#include "lib/extender/decide.h"

namespace neuron::extender {
namespace {

Verdict Failed(bool unresolvable, std::string reason, std::string category) {
  return Verdict{false, unresolvable, std::move(reason), std::move(category)};
}

// Why `pod` cannot be placed anywhere as a group pod; "" when it can be considered.
std::string GroupProblem(const PodInfo& pod) {
  if (!pod.group->error.empty()) {
    return pod.group->error;
  }
  if (!pod.request.Any()) {
    return absl::StrCat("pod of UltraServer group ", pod.group->key,
                        " asks for no Neuron resource");
  }
  return "";
}

}  // namespace

std::vector<Verdict> GroupVerdicts(const ClusterView& view, const PodInfo& pod,
                                   const std::vector<std::string_view>& names) {
  if (std::string problem = GroupProblem(pod); !problem.empty()) {
    return std::vector<Verdict>(names.size(), Failed(true, problem, "us_group"));
  }
  const std::vector<GroupCheck> checks = view.CheckGroup(pod, names);
  std::vector<std::string_view> fit;
  for (const GroupCheck& c : checks) {
    fit.insert(fit.end(), c.fit_nodes.begin(), c.fit_nodes.end());
  }
  const std::vector<std::shared_ptr<const NodeState>> states = view.Snapshots(fit, pod.Key());
  std::vector<Verdict> out;
  out.reserve(names.size());
  size_t k = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    const GroupCheck& c = checks[i];
    if (!c.ok) {
      out.push_back(Failed(c.unresolvable, c.reason, c.category));
      continue;
    }
    Verdict v{true, false, "", "fits"};
    for (const std::string& n : c.fit_nodes) {
      const std::shared_ptr<const NodeState>& st = states[k++];
      if (!v.fits) {
        continue;
      }
      if (Verdict one = Evaluate(st.get(), pod.request); !one.fits) {
        v = n == names[i] ? std::move(one)
                          : Failed(one.unresolvable,
                                   absl::StrCat("node ", n, " of ", c.set_name, ": ", one.reason),
                                   one.category);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<int> GroupScores(const ClusterView& view, const PodInfo& pod,
                             const std::vector<std::string_view>& names) {
  if (!GroupProblem(pod).empty()) {
    return std::vector<int>(names.size(), 0);
  }
  return view.GroupScores(pod, names);
}

}  // namespace neuron::extender
