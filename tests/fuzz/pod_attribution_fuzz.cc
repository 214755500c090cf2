// File: tests/fuzz/pod_attribution_fuzz.cc
// Fuzzes what the node agent derives from the kubelet's PodResources v1 List reply: the input is
// the reply's protobuf wire bytes, attributed against four node layouts (inf2 at LNC=1, trn2 at
// LNC=2, LNC unknown, no devices). Checked: every row names a core of the layout, rows are
// sorted and unique per (device, core, namespace, pod), names are non-empty, resources are ours,
// problems are capped, the result does not depend on the order of pods in the reply, and the
// collector exports exactly one series per row.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_split.h"
#include "google/protobuf/stubs/logging.h"
#include "lib/agent/allocation_collector.h"
#include "lib/agent/pod_attribution.h"

namespace ag = neuron::agent;

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

ag::NodeLayout Layout(int devices, int physical, int lnc) {
  ag::NodeLayout l;
  for (int i = 0; i < devices; ++i) l.devices.push_back({i, physical});
  l.lnc = lnc;
  l.pool = "node-a";
  return l;
}

void CheckRows(const ag::PodAttribution& a, const ag::NodeLayout& layout) {
  static const std::set<std::string> kResources = {"aws.amazon.com/neuron",
                                                   "aws.amazon.com/neuroncore", ag::kDraResource};
  for (size_t i = 0; i < a.cores.size(); ++i) {
    const ag::CoreAllocation& c = a.cores[i];
    auto dev = std::find_if(layout.devices.begin(), layout.devices.end(),
                            [&](const auto& d) { return d.index == c.device; });
    Check(dev != layout.devices.end() && c.core >= 0 && c.core < dev->physical_cores);
    Check(!c.ns.empty() && !c.pod.empty() && !c.container.empty());
    for (absl::string_view r : absl::StrSplit(c.resource, ',')) {
      Check(kResources.count(std::string(r)) == 1);
    }
    if (i > 0) {
      const ag::CoreAllocation& p = a.cores[i - 1];
      Check(std::tie(p.device, p.core, p.ns, p.pod) < std::tie(c.device, c.core, c.ns, c.pod));
    }
  }
  Check(a.problems.size() <= static_cast<size_t>(ag::kMaxProblems));
  Check(static_cast<int>(a.problems.size()) <= a.problems_total);
  Check(a.problems_total == 0 || !a.problems.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Rejected invalid UTF-8 in string fields is logged per input: too slow and noisy here.
  static const bool kQuiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)kQuiet;
  v1::ListPodResourcesResponse reply;
  if (!reply.ParseFromArray(data, static_cast<int>(size))) return 0;
  v1::ListPodResourcesResponse reversed = reply;
  std::reverse(reversed.mutable_pod_resources()->begin(), reversed.mutable_pod_resources()->end());

  for (const ag::NodeLayout& layout :
       {Layout(6, 2, 1), Layout(16, 8, 2), Layout(4, 8, 0), Layout(0, 0, 1)}) {
    const ag::PodAttribution a = ag::AttributePods(reply, layout);
    CheckRows(a, layout);
    Check(ag::AttributePods(reversed, layout).cores == a.cores);

    ag::AllocationSnapshot snapshot;
    snapshot.cores = a.cores;
    snapshot.ignored_entries = a.problems_total;
    size_t series = 0;
    for (const auto& family : ag::AllocationFamilies(snapshot)) {
      if (family.name == "neuron_core_allocation") series = family.metric.size();
    }
    Check(series == a.cores.size());
  }
  return 0;
}
