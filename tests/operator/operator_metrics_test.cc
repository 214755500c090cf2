// File: tests/operator/operator_metrics_test.cc
// The operator's metrics as Prometheus scrapes them: pass counters and the driver rollout
// gauges, which follow each pass and vanish with the rollout; caches by Ready state; promtool
// accepts the text.
#include "lib/operator/operator_metrics.h"

#include <memory>
#include <string>
#include <tuple>

#include "catch2/catch.hpp"
#include "lib/metrics/exposition.h"
#include "tests/testing/promtool.h"

namespace neuron::op {
namespace {

constexpr char kKey[] = "aws-neuron-operator/neuron";

struct Scraped {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  OperatorMetrics metrics{*registry};

  std::string Text() const { return metrics::Expose({registry}); }
  bool Has(const std::string& line) const {
    return Text().find("\n" + line + "\n") != std::string::npos;
  }
};

ReconcileResult Rollout(int pending, int upgrading, int done, int failed, absl::Duration longest) {
  ReconcileResult r;
  UpgradeProgress p;
  std::tie(p.pending, p.upgrading, p.done, p.failed, p.longest_upgrading) =
      std::tie(pending, upgrading, done, failed, longest);
  r.upgrade = p;
  return r;
}

TEST_CASE("rollout gauges follow each pass and go with the rollout", "[operator][metrics]") {
  Scraped s;
  s.metrics.ObservePass(kKey, absl::Milliseconds(3), Rollout(2, 1, 7, 0, absl::Minutes(12)), 0);
  const std::string dc = std::string("deviceconfig=\"") + kKey + "\"";
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"pending\"} 2"));
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"upgrading\"} 1"));
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"done\"} 7"));
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"failed\"} 0"));
  CHECK(s.Has("neuron_operator_upgrade_node_seconds{" + dc + "} 720"));
  CHECK(s.Has("neuron_operator_reconcile_total{result=\"success\"} 1"));
  CHECK(testing::PromtoolCheck(s.Text()).ok());

  // A failed pass counts as an error and leaves the rollout as last seen.
  s.metrics.ObservePass(kKey, absl::Milliseconds(3), absl::UnavailableError("apiserver"), 4);
  CHECK(s.Has("neuron_operator_reconcile_errors_total 1"));
  CHECK(s.Has("neuron_operator_reconcile_total{result=\"error\"} 1"));
  CHECK(s.Has("neuron_operator_work_queue_depth 4"));
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"upgrading\"} 1"));

  // The node failed: the stuck timer stops.
  s.metrics.ObservePass(kKey, absl::Milliseconds(3), Rollout(2, 0, 7, 1, absl::ZeroDuration()), 0);
  CHECK(s.Has("neuron_operator_upgrade_nodes{" + dc + ",state=\"failed\"} 1"));
  CHECK(s.Has("neuron_operator_upgrade_node_seconds{" + dc + "} 0"));

  // Deleted (or no version managed any more): its series go, another DeviceConfig's stay.
  s.metrics.ObservePass("other/dc", absl::Milliseconds(1), Rollout(0, 0, 3, 0, {}), 0);
  s.metrics.ObservePass(kKey, absl::Milliseconds(3), ReconcileResult{}, 0);
  CHECK(s.Text().find(dc) == std::string::npos);
  CHECK(s.Has("neuron_operator_upgrade_nodes{deviceconfig=\"other/dc\",state=\"done\"} 3"));
  s.metrics.ObservePass(kKey, absl::Milliseconds(3), ReconcileResult{}, 0);  // twice is fine
  CHECK(testing::PromtoolCheck(s.Text()).ok());
}

TEST_CASE("leadership is a 0/1 gauge", "[operator][metrics]") {
  Scraped s;
  CHECK(s.Has("neuron_operator_leader 0"));
  s.metrics.SetLeader(true);
  CHECK(s.Has("neuron_operator_leader 1"));
  s.metrics.SetLeader(false);
  CHECK(s.Has("neuron_operator_leader 0"));
}

TEST_CASE("caches by Ready state, and failed resolves", "[operator][metrics][cache]") {
  auto registry = std::make_shared<prometheus::Registry>();
  CacheMetrics m(*registry);
  auto has = [&](const std::string& line) {
    return metrics::Expose({registry}).find("\n" + line + "\n") != std::string::npos;
  };
  m.SetReady("NeuronCache/team/a", true);
  m.SetReady("NeuronCache/team/b", false);
  m.SetReady("ClusterNeuronCache/c", true);
  CHECK(has("neuron_operator_caches{ready=\"true\"} 2"));
  CHECK(has("neuron_operator_caches{ready=\"false\"} 1"));
  m.SetReady("NeuronCache/team/b", true);            // a cache counts once, in its latest state
  m.SetReady("ClusterNeuronCache/c", std::nullopt);  // deleted
  CHECK(has("neuron_operator_caches{ready=\"true\"} 2"));
  CHECK(has("neuron_operator_caches{ready=\"false\"} 0"));
  m.CountResolveFailure();
  CHECK(has("neuron_operator_cache_resolve_failures_total 1"));
  CHECK(testing::PromtoolCheck(metrics::Expose({registry})).ok());
}

}  // namespace
}  // namespace neuron::op
