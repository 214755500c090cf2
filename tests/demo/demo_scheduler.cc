// File: tests/demo/demo_scheduler.cc
#include "tests/demo/demo_scheduler.h"

#include "absl/strings/str_cat.h"
#include "tests/testing/http_get.h"

namespace neuron::demo {
namespace {

using nlohmann::json;

absl::StatusOr<json> Call(int port, const std::string& verb, const json& body) {
  const testing::HttpResult r = testing::HttpPost(port, "/" + verb, body.dump());
  if (r.status != 200) {
    return absl::UnavailableError(
        absl::StrCat("extender /", verb, ": HTTP ", r.status, " ", r.error, r.body));
  }
  json out = json::parse(r.body, nullptr, false);
  if (out.is_discarded()) return absl::DataLossError("extender /" + verb + ": not JSON");
  return out;
}

void AddReasons(const json& failed, std::map<std::string, std::string>& into) {
  if (!failed.is_object()) return;
  for (const auto& [node, reason] : failed.items()) into[node] = reason.get<std::string>();
}

}  // namespace

absl::StatusOr<Placement> SchedulePod(int extender_port, const json& pod,
                                      const std::vector<std::string>& nodes) {
  Placement p;
  const json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}};
  absl::StatusOr<json> filtered = Call(extender_port, "filter", args);
  if (!filtered.ok()) return filtered.status();
  if (!filtered->value("Error", "").empty()) {
    return absl::InternalError("extender filter error: " + filtered->value("Error", ""));
  }
  AddReasons(filtered->value("FailedNodes", json()), p.refused);
  AddReasons(filtered->value("FailedAndUnresolvableNodes", json()), p.refused);
  const json fit = filtered->value("NodeNames", json::array());
  if (!fit.is_array() || fit.empty()) return p;

  absl::StatusOr<json> scores =
      Call(extender_port, "prioritize", {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", fit}});
  if (!scores.ok()) return scores.status();
  int best = -1;
  for (const json& host : *scores) {
    const std::string name = host.value("Host", "");
    const int score = host.value("Score", 0);
    p.scores[name] = score;
    if (score > best) {
      best = score;
      p.node = name;
    }
  }
  if (p.node.empty()) p.node = fit.front().get<std::string>();

  const json& meta = pod["metadata"];
  absl::StatusOr<json> bound = Call(extender_port, "bind",
                                    {{"PodName", meta.value("name", "")},
                                     {"PodNamespace", meta.value("namespace", "")},
                                     {"PodUID", meta.value("uid", "")},
                                     {"Node", p.node}});
  if (!bound.ok()) return bound.status();
  if (!bound->value("Error", "").empty()) {
    return absl::AbortedError("extender bind error: " + bound->value("Error", ""));
  }
  return p;
}

}  // namespace neuron::demo
