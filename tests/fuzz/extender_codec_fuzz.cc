// File: tests/fuzz/extender_codec_fuzz.cc
// Fuzzes the scheduler extender wire codec with what kube-scheduler (or anyone) could POST: every
// decoder must return a Status, never throw or crash, and what we encode must decode back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/base/json_escape.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/group_decide.h"
#include "lib/extender/node.h"
#include "lib/extender/wire.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {
namespace {

// What a name becomes once encoded as a JSON string and read back (decoded names are valid
// UTF-8, so the same; the encoder's escaping must round-trip).
std::string AsJsonCarries(std::string_view s) {
  std::string quoted;
  AppendJsonString(quoted, s);
  const nlohmann::json back = nlohmann::json::parse(quoted, nullptr, /*allow_exceptions=*/false);
  if (!back.is_string()) std::abort();
  return back.get<std::string>();
}

void FuzzOne(std::string_view in) {
  if (auto args = DecodeExtenderArgs(in); args.ok()) {
    FilterResult r;
    if (args->node_names) {
      r.node_names.emplace(args->node_names->begin(), args->node_names->end());
    }
    if (args->nodes) {
      r.nodes.emplace();
      for (const RawNode& n : *args->nodes) r.nodes->push_back(n.json);
    }
    std::map<std::string, std::string> expected;  // names as JSON carries them
    for (std::string_view n : args->CandidateNames()) {
      r.failed[std::string(n)] = "fuzz";
      expected[AsJsonCarries(n)] = "fuzz";
    }
    // Echoed Node texts must come back exactly, and the names with them.
    const std::string encoded = EncodeFilterResult(r);
    auto back = DecodeFilterResult(encoded);
    if (!back.ok() || back->failed != expected || back->nodes != r.nodes) std::abort();
    if (args->pod.request.devices < 0 || args->pod.request.cores < 0 ||
        args->pod.request.devices > kMaxRequest || args->pod.request.cores > kMaxRequest) {
      std::abort();
    }
  }
  if (auto b = DecodeBindingArgs(in); b.ok() && (b->pod_name.empty() || b->node.empty())) {
    std::abort();
  }
  if (auto p = DecodePreemptionArgs(in); p.ok()) (void)EncodePreemptionResult(p->victims);
  if (auto h = DecodeHostPriorityList(in); h.ok()) {
    auto back = DecodeHostPriorityList(EncodeHostPriorityList(*h));
    if (!back.ok() || back->size() != h->size()) std::abort();
  }
  (void)DecodeFilterResult(in);
  // What the informers hand the cluster view: any object, trimmed or not, must parse safely.
  if (auto obj = ParseJson(in); obj.ok()) {
    ClusterView view;
    view.UpsertNode(*obj);
    view.UpsertPod(*obj);
    const NodeInfo a = ParseNode(*obj);
    // Lists are parsed pruned to what the parsers read: they must read the same from it.
    if (auto pruned = ParsePruned(in, NodeFields()); pruned.ok()) {
      view.UpsertNode(*pruned);
      const NodeInfo c = ParseNode(*pruned);
      if (c.name != a.name || c.shape != a.shape || c.alloc_devices != a.alloc_devices ||
          c.alloc_cores != a.alloc_cores || c.source != a.source ||
          c.schedulable != a.schedulable ||
          (c.ultraserver == nullptr) != (a.ultraserver == nullptr) ||
          (c.ultraserver && !(*c.ultraserver == *a.ultraserver))) {
        std::abort();
      }
    }  // (nlohmann stops at a NUL byte and accepts what follows; the scanner does not)
    if (auto pruned = ParsePruned(in, PodFields()); pruned.ok()) {
      view.UpsertPod(*pruned);
      auto full = ParsePod(*obj), cut = ParsePod(*pruned);
      if (full.ok() != cut.ok()) std::abort();
      if (full.ok() && (full->Key() != cut->Key() || full->uid != cut->uid ||
                        full->node_name != cut->node_name || full->phase != cut->phase ||
                        !(full->request == cut->request) || full->assignment != cut->assignment ||
                        full->group != cut->group)) {
        std::abort();
      }
      // A group pod's decisions on the node just seen: any labels, never a crash.
      if (full.ok() && full->group) {
        const std::vector<std::string_view> names = {a.name};
        std::deque<Verdict> pool;
        if (GroupVerdicts(view, *full, names, pool).size() != 1) std::abort();
        if (GroupScores(view, *full, names).size() != 1) std::abort();
      }
    }
    for (const std::string& name :
         view.node_count() ? std::vector<std::string>{a.name} : std::vector<std::string>{}) {
      (void)view.DebugNode(name);
    }
    view.DeletePod(*obj);
    view.DeleteNode(a.name);
  }
}

}  // namespace
}  // namespace neuron::extender

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuron::extender::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
