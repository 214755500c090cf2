// File: lib/extender/group_decide.cc
#include "lib/extender/group_decide.h"

#include "absl/container/flat_hash_map.h"
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

std::vector<const Verdict*> GroupVerdicts(const ClusterView& view, const PodInfo& pod,
                                          const std::vector<std::string_view>& names,
                                          std::deque<Verdict>& pool) {
  static const Verdict kFits{true, false, "", "fits"};
  if (std::string problem = GroupProblem(pod); !problem.empty()) {
    const Verdict* v = &pool.emplace_back(Failed(true, problem, "us_group"));
    return std::vector<const Verdict*>(names.size(), v);
  }
  const GroupChecks checks = view.CheckGroup(pod, names);
  std::vector<std::string_view> fit;
  for (const GroupCheck* c : checks.of) {
    fit.insert(fit.end(), c->fit_nodes.begin(), c->fit_nodes.end());
  }
  const std::vector<std::shared_ptr<const NodeState>> states = view.Snapshots(fit, pod.Key());
  absl::flat_hash_map<const GroupCheck*, const Verdict*> failed;  // shared checks, shared verdicts
  std::vector<const Verdict*> out;
  out.reserve(names.size());
  size_t k = 0;
  for (size_t i = 0; i < checks.of.size(); ++i) {
    const GroupCheck* c = checks.of[i];
    if (!c->ok) {
      const Verdict*& v = failed[c];
      if (v == nullptr) {
        v = &pool.emplace_back(Failed(c->unresolvable, c->reason, c->category));
      }
      out.push_back(v);
      continue;
    }
    const Verdict* v = &kFits;
    for (const std::string& n : c->fit_nodes) {
      const std::shared_ptr<const NodeState>& st = states[k++];
      if (!v->fits) {
        continue;
      }
      if (Verdict one = Evaluate(st.get(), pod.request); !one.fits) {
        v = &pool.emplace_back(
            n == names[i] ? std::move(one)
                          : Failed(one.unresolvable,
                                   absl::StrCat("node ", n, " of ", c->set_name, ": ", one.reason),
                                   one.category));
      }
    }
    out.push_back(v);
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
