// File: lib/extender/filter_answer.cc
#include "lib/extender/filter_answer.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "lib/base/json_escape.h"

namespace neuron::extender {
namespace {

struct Failure {
  std::string_view name;
  const Verdict* verdict;
};

// A JSON object of name -> reason, in key order with the first of repeated names kept: what a
// std::map filled by emplace encodes to (and Go sorts map keys the same, byte-wise).
void AppendFailures(std::string& out, std::vector<Failure>& failed) {
  std::stable_sort(failed.begin(), failed.end(),
                   [](const Failure& a, const Failure& b) { return a.name < b.name; });
  out += '{';
  for (size_t i = 0; i < failed.size(); ++i) {
    if (i > 0 && failed[i].name == failed[i - 1].name) continue;
    if (out.back() != '{') out += ',';
    AppendJsonString(out, failed[i].name);
    out += ':';
    AppendJsonString(out, failed[i].verdict->reason);
  }
  out += '}';
}

void AppendPassed(std::string& out, const ExtenderArgs& args,
                  const std::vector<std::string_view>& names, const FilterVerdicts& v) {
  out += "{\"Nodes\":";
  if (args.node_names) {
    out += "null,\"NodeNames\":[";
  } else {
    out += "{\"metadata\":{},\"items\":[";
  }
  bool first = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!v.of[i]->fits) continue;
    if (!first) out += ',';
    first = false;
    if (args.node_names) {
      AppendJsonString(out, names[i]);
    } else {
      out += (*args.nodes)[i].json;  // echoed verbatim: validated JSON from the request
    }
  }
  out += args.node_names ? "]" : "]},\"NodeNames\":null";
}

}  // namespace

std::string EncodeFilterAnswer(const ExtenderArgs& args, const FilterVerdicts& v) {
  const std::vector<std::string_view> names = args.CandidateNames();
  std::vector<Failure> failed, unresolvable;
  size_t size = 128;
  for (size_t i = 0; i < names.size(); ++i) {
    const Verdict& verdict = *v.of[i];
    size += names[i].size() + 3;
    if (args.nodes && verdict.fits) size += (*args.nodes)[i].json.size();
    if (verdict.fits) continue;
    size += verdict.reason.size() + 3;
    (verdict.unresolvable ? unresolvable : failed).push_back(Failure{names[i], &verdict});
  }
  std::string out;
  out.reserve(size);
  AppendPassed(out, args, names, v);
  out += ",\"FailedNodes\":";
  AppendFailures(out, failed);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendFailures(out, unresolvable);
  out += ",\"Error\":\"\"}";
  return out;
}

}  // namespace neuron::extender
