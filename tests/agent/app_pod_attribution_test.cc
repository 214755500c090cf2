// File: tests/agent/app_pod_attribution_test.cc
// The agent on an emulated inf2.24xlarge asks the fake kubelet's PodResources server (a real
// unix socket) which pods hold its cores: /metrics shows neuron_core_allocation for a device
// plugin pod and a DRA pod, promtool accepts the page, a pod that ends is gone after the next
// List, and a kubelet that goes away takes the series with it after one more interval.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_split.h"
#include "catch2/catch.hpp"
#include "google/protobuf/text_format.h"
#include "lib/agent/app.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"

namespace neuron::agent {
namespace {

constexpr char kTwoPods[] = R"pb(
  pod_resources {
    name: "train-0"
    namespace: "ml"
    containers {
      name: "main"
      devices { resource_name: "aws.amazon.com/neuron" device_ids: "1" }
    }
  }
  pod_resources {
    name: "infer-0"
    namespace: "serve"
    containers {
      name: "server"
      dynamic_resources {
        class_name: "neuron.aws.com"
        claim_name: "cores"
        claim_namespace: "serve"
        claim_resources {
          driver_name: "neuron.aws.com"
          pool_name: "node-a"
          device_name: "neurondevice4-core1"
        }
      }
    }
  })pb";

v1::ListPodResourcesResponse AttributionReply(const std::string& text) {
  v1::ListPodResourcesResponse r;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &r));
  return r;
}

// The neuron_core_allocation samples of a page, each as its label map.
std::vector<std::map<std::string, std::string>> Allocations(const std::string& page) {
  std::vector<std::map<std::string, std::string>> out;
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (!absl::ConsumePrefix(&line, "neuron_core_allocation{")) continue;
    const size_t end = line.find("} ");
    REQUIRE(end != absl::string_view::npos);
    CHECK(line.substr(end) == "} 1");
    std::map<std::string, std::string> labels;
    for (absl::string_view pair : absl::StrSplit(line.substr(0, end), "\",")) {
      std::pair<std::string, std::string> kv = absl::StrSplit(pair, absl::MaxSplits("=\"", 1));
      if (!kv.second.empty() && kv.second.back() == '"') kv.second.pop_back();
      labels.insert(std::move(kv));
    }
    out.push_back(std::move(labels));
  }
  return out;
}

struct Agent {
  std::string dir;
  std::unique_ptr<App> app;

  explicit Agent(const std::string& socket) {
    char t[] = "/tmp/agent-pods-XXXXXX";
    dir = mkdtemp(t);
    AgentOptions opts;
    opts.emulate = "inf2.24xlarge";
    opts.emulate_dir = dir + "/host";
    opts.listen = "127.0.0.1:0";
    opts.node_name = "node-a";
    opts.interval = absl::Milliseconds(200);
    opts.health_interval = absl::ZeroDuration();
    opts.pod_resources_socket = socket;
    app = std::make_unique<App>(opts, Clock::Real());
  }
  ~Agent() {
    app->Stop();
    std::filesystem::remove_all(dir);
  }
  std::string Page() const { return testing::HttpGet(app->port(), "/metrics").body; }
  // Waits (30 s at most) until the page satisfies `pred`.
  template <typename Pred>
  bool WaitFor(Pred pred) const {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      if (pred(Page())) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }
};

TEST_CASE("the agent exports which pod holds each core, and forgets pods that end",
          "[agent][integration]") {
  auto kubelet = std::make_unique<fakes::FakeKubelet>();
  REQUIRE(kubelet->StartPodResources().ok());
  kubelet->SetPodResources(AttributionReply(kTwoPods));
  Agent agent(kubelet->pod_resources_socket());
  REQUIRE(agent.app->Start().ok());

  // The first scan asked the kubelet before the first page was rendered.
  const std::string page = agent.Page();
  const auto rows = Allocations(page);
  REQUIRE(rows.size() == 3);  // inf2: 2 physical cores per device, LNC=1
  using L = std::map<std::string, std::string>;
  const L dp = {{"device", "1"},
                {"namespace", "ml"},
                {"pod", "train-0"},
                {"container", "main"},
                {"resource", "aws.amazon.com/neuron"}};
  for (int core = 0; core < 2; ++core) {
    L want = dp;
    want["core"] = std::to_string(core);
    CHECK(rows[core] == want);
  }
  CHECK(rows[2] == L{{"device", "4"},
                     {"core", "1"},
                     {"namespace", "serve"},
                     {"pod", "infer-0"},
                     {"container", "server"},
                     {"resource", "dra:neuron.aws.com"}});
  // The per-core families carry the same device/core labels, so the join works.
  CHECK(page.find("neuron_core_memory_used_bytes{device=\"4\",core=\"1\"") != std::string::npos);
  CHECK(page.find("\nneuron_agent_pod_resources_up 1\n") != std::string::npos);
  CHECK(page.find("\nneuron_agent_pod_resources_ignored_entries 0\n") != std::string::npos);
  const absl::Status promtool = testing::PromtoolCheck(page);
  INFO(promtool.ToString());
  CHECK(promtool.ok());

  // train-0 ends: once a List that started after the change has been rendered (the second
  // List after it), the page no longer has it.
  kubelet->SetPodResources(AttributionReply(R"pb(
    pod_resources {
      name: "infer-0"
      namespace: "serve"
      containers {
        name: "server"
        dynamic_resources {
          claim_name: "cores"
          claim_namespace: "serve"
          claim_resources {
            driver_name: "neuron.aws.com"
            pool_name: "node-a"
            device_name: "neurondevice4-core1"
          }
        }
      }
    })pb"));
  const int calls = kubelet->pod_resources_list_calls();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (kubelet->pod_resources_list_calls() < calls + 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const auto after = Allocations(agent.Page());
  REQUIRE(after.size() == 1);
  CHECK(after[0].at("pod") == "infer-0");

  // The kubelet goes away: the last answer is kept one more interval, then dropped.
  kubelet.reset();
  CHECK(agent.WaitFor([](const std::string& p) {
    return p.find("\nneuron_agent_pod_resources_up 0\n") != std::string::npos;
  }));
  CHECK(agent.WaitFor([](const std::string& p) { return Allocations(p).empty(); }));
  CHECK(agent.Page().find("neuron_agent_pod_resources_errors_total ") != std::string::npos);
}

TEST_CASE("without a PodResources socket the agent exports no attribution", "[agent]") {
  Agent agent("");
  REQUIRE(agent.app->Start().ok());
  const std::string page = agent.Page();
  CHECK(page.find("\nneuron_node_devices 6\n") != std::string::npos);
  CHECK(page.find("neuron_agent_pod_resources_up") == std::string::npos);
  CHECK(Allocations(page).empty());
}

}  // namespace
}  // namespace neuron::agent
