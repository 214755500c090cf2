#include "lib/metrics/exposition.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"

namespace neuron::metrics {
namespace {

class SnapshotSource final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    out.push_back(FamilyBuilder("demo_devices", "Devices seen.", prometheus::MetricType::Gauge)
                      .Add({{"node", "n\"1"}}, 16)
                      .Build());
    out.push_back(FamilyBuilder("demo_errors_total", "Errors.", prometheus::MetricType::Counter)
                      .Add({{"device", "0"}, {"kind", "ecc"}}, 3)
                      .Add({{"device", "1"}, {"kind", "ecc"}}, 0)
                      .Build());
    return out;
  }
};

TEST_CASE("Expose serialises registries and snapshot collectors in text format", "[metrics]") {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("demo_requests_total")
      .Help("Requests.")
      .Register(*registry)
      .Add({})
      .Increment(2);
  auto snapshot = std::make_shared<SnapshotSource>();
  const std::string text = Expose({registry, snapshot});
  CHECK(text.find("# TYPE demo_requests_total counter\ndemo_requests_total 2") !=
        std::string::npos);
  CHECK(text.find("demo_devices{node=\"n\\\"1\"} 16") != std::string::npos);
  CHECK(text.find("demo_errors_total{device=\"0\",kind=\"ecc\"} 3") != std::string::npos);
  CHECK(testing::PromtoolCheck(text).ok());
}

TEST_CASE("Expose skips sources that are gone", "[metrics]") {
  std::weak_ptr<prometheus::Collectable> gone;
  {
    auto temp = std::make_shared<SnapshotSource>();
    gone = temp;
  }
  CHECK(Expose({gone}).empty());
}

TEST_CASE("ServeMetrics answers /metrics with the 0.0.4 content type", "[metrics]") {
  httpserver::HttpServer server;
  auto snapshot = std::make_shared<SnapshotSource>();
  ServeMetrics(server, {snapshot});
  REQUIRE(server.Start("127.0.0.1:0").ok());
  auto res = testing::HttpGet(server.port(), "/metrics");
  CHECK(res.status == 200);
  CHECK(res.content_type == kTextContentType);
  CHECK(res.body.find("demo_devices") != std::string::npos);
}

}  // namespace
}  // namespace neuron::metrics
