// File: tests/deviceplugin/metrics_integration_test.cc
// The plugin's /metrics over real HTTP on loopback while the fake kubelet drives both endpoints
// over real unix sockets: Allocate (ok and refused), Register (ok, after a kubelet restart, and
// failing while the kubelet is absent), ListAndWatch streams and the advertised-devices gauge.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/deviceplugin/metrics.h"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/deviceplugin/plugin_server.h"
#include "lib/httpserver/http_server.h"
#include "lib/metrics/exposition.h"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"

namespace neuron::deviceplugin {
namespace {

using testing::FakeDeviceSource;
using testing::SnapshotForShape;
using Labels = std::map<std::string, std::string>;

constexpr absl::Duration kMetricsWait = absl::Seconds(10);
constexpr char kNeuron[] = "aws.amazon.com/neuron";
constexpr char kMetricsCore[] = "aws.amazon.com/neuroncore";

// The value of series `name{labels}` in exposition `text` (label order does not matter), or
// nullopt when absent.
std::optional<double> Sample(const std::string& text, const std::string& name,
                             const Labels& labels) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    absl::string_view series = line.substr(0, space);
    Labels got;
    if (const size_t brace = series.find('{'); brace != absl::string_view::npos) {
      absl::string_view inner = series.substr(brace + 1);
      inner = absl::StripSuffix(inner, "}");
      for (absl::string_view pair : absl::StrSplit(inner, ',', absl::SkipEmpty())) {
        std::pair<std::string, std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
        got[kv.first] = std::string(absl::StripSuffix(absl::StripPrefix(kv.second, "\""), "\""));
      }
      series = series.substr(0, brace);
    }
    double value = 0;
    if (series == name && got == labels && absl::SimpleAtod(line.substr(space + 1), &value)) {
      return value;
    }
  }
  return std::nullopt;
}

// Both endpoints with metrics, the manager on its own thread and the HTTP server on 127.0.0.1.
class MetricsHarness {
 public:
  MetricsHarness(fakes::FakeKubelet& kubelet, const NodeSnapshot& snap)
      : source_(snap),
        dev_alloc_(assignment::ResourceKind::kDevice),
        core_alloc_(assignment::ResourceKind::kCore),
        dev_(dev_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuron.sock"),
        core_(core_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuroncore.sock"),
        manager_({&dev_, &core_}, Options(kubelet.dir(), &metrics_)) {
    for (PluginServer* s : {&dev_, &core_}) s->set_metrics(&metrics_);
    metrics_.WatchDevices(dev_alloc_, source_);
    metrics_.WatchDevices(core_alloc_, source_);
    source_.Subscribe([this] {
      dev_.NotifyChanged();
      core_.NotifyChanged();
    });
    metrics::ServeMetrics(http_, metrics_.sources());
    httpserver::AddHealthEndpoints(http_, [this] { return manager_.all_registered(); });
    start_status_ = http_.Start("127.0.0.1:0");
    thread_ = std::thread([this] { run_status_ = manager_.Run(stop_); });
  }
  ~MetricsHarness() { Stop(); }

  void Stop() {
    if (stop_.HasBeenNotified()) return;
    stop_.Notify();
    thread_.join();
    http_.Stop();
  }

  const absl::Status& start_status() const { return start_status_; }
  const absl::Status& run_status() const { return run_status_; }
  int port() const { return http_.port(); }
  FakeDeviceSource& source() { return source_; }
  PluginManager& manager() { return manager_; }

  std::string Scrape() const {
    const neuron::testing::HttpResult r = neuron::testing::HttpGet(http_.port(), "/metrics");
    INFO(r.error);
    REQUIRE(r.status == 200);
    CHECK(r.content_type == metrics::kTextContentType);
    return r.body;
  }
  std::optional<double> Value(const std::string& name, const Labels& labels) const {
    return Sample(Scrape(), name, labels);
  }
  // Polls until series `name{labels}` satisfies `done` (or the wait ends); returns the last
  // value (0 when absent).
  double WaitUntil(const std::string& name, const Labels& labels,
                   const std::function<bool(double)>& done) const {
    const absl::Time deadline = absl::Now() + kMetricsWait;
    double v = Value(name, labels).value_or(0);
    while (!done(v) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
      v = Value(name, labels).value_or(0);
    }
    return v;
  }
  double WaitFor(const std::string& name, const Labels& labels, double want) const {
    return WaitUntil(name, labels, [want](double v) { return v == want; });
  }

 private:
  static ManagerOptions Options(const std::string& dir, PluginMetrics* metrics) {
    ManagerOptions o;
    o.plugin_dir = dir;
    o.backoff.initial = absl::Milliseconds(20);
    o.backoff.max = absl::Milliseconds(200);
    o.metrics = metrics;
    return o;
  }

  PluginMetrics metrics_;  // first: outlives the servers, which count into it
  FakeDeviceSource source_;
  Allocator dev_alloc_, core_alloc_;
  PluginServer dev_, core_;
  PluginManager manager_;
  httpserver::HttpServer http_;
  absl::Status start_status_, run_status_;
  absl::Notification stop_;
  std::thread thread_;
};

v1beta1::AllocateRequest MetricsAllocReq(const std::vector<std::string>& ids) {
  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : ids) c->add_devices_ids(id);
  return req;
}

Labels Res(const std::string& resource, const std::string& key, const std::string& value) {
  return {{"resource", resource}, {key, value}};
}

int CountHealth(const v1beta1::ListAndWatchResponse& r, const std::string& health) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == health;
  return n;
}

TEST_CASE("/metrics counts Allocate results, registrations and streams", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  MetricsHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf2.24xlarge")));
  REQUIRE(h.start_status().ok());
  REQUIRE(kubelet.WaitForRegistrations(2, kMetricsWait));
  REQUIRE(kubelet.WaitForDevices(
      kNeuron, [](const auto& r) { return r.devices_size() == 6; }, kMetricsWait));
  REQUIRE(kubelet.WaitForDevices(
      kMetricsCore, [](const auto& r) { return r.devices_size() == 12; }, kMetricsWait));

  const std::string allocs = "neuron_deviceplugin_allocations_total";
  const std::string regs = "neuron_deviceplugin_registrations_total";
  const std::string streams = "neuron_deviceplugin_list_and_watch_streams";
  // Every series exists from the start, at 0 until something happens.
  for (const char* res : {kNeuron, kMetricsCore}) {
    CHECK(h.Value(allocs, Res(res, "result", "ok")) == 0);
    CHECK(h.Value(allocs, Res(res, "result", "error")) == 0);
    CHECK(h.WaitFor(regs, Res(res, "result", "ok"), 1) == 1);
    CHECK(h.Value(regs, Res(res, "result", "error")) == 0);
    CHECK(h.WaitFor(streams, {{"resource", res}}, 1) == 1);
  }

  // One Allocate that succeeds, then one refused (unknown device ID), over the real socket.
  REQUIRE(kubelet.Allocate(kNeuron, MetricsAllocReq({"0", "1"})).ok());
  CHECK(h.Value(allocs, Res(kNeuron, "result", "ok")) == 1);
  CHECK(h.Value(allocs, Res(kNeuron, "result", "error")) == 0);
  const absl::Status refused = kubelet.Allocate(kNeuron, MetricsAllocReq({"17"})).status();
  CHECK(absl::IsInvalidArgument(refused));
  CHECK(h.Value(allocs, Res(kNeuron, "result", "ok")) == 1);
  CHECK(h.Value(allocs, Res(kNeuron, "result", "error")) == 1);
  // An empty request is refused too; the other resource's counters did not move.
  CHECK_FALSE(kubelet.Allocate(kNeuron, v1beta1::AllocateRequest()).ok());
  CHECK(h.Value(allocs, Res(kNeuron, "result", "error")) == 2);
  CHECK(h.Value(allocs, Res(kMetricsCore, "result", "ok")) == 0);
  CHECK(h.Value(allocs, Res(kMetricsCore, "result", "error")) == 0);
  REQUIRE(kubelet.Allocate(kMetricsCore, MetricsAllocReq({"11"})).ok());
  CHECK(h.Value(allocs, Res(kMetricsCore, "result", "ok")) == 1);

  // /healthz, and /readyz while every endpoint is registered.
  CHECK(neuron::testing::HttpGet(h.port(), "/healthz").status == 200);
  CHECK(neuron::testing::HttpGet(h.port(), "/readyz").status == 200);

  // A kubelet restart: each endpoint registers again (more than once when the socket-deleted
  // and kubelet.sock-created events arrive apart), a new stream replaces the old one.
  REQUIRE(kubelet.Restart().ok());
  REQUIRE(kubelet.WaitForRegistrations(4, kMetricsWait));
  for (const char* res : {kNeuron, kMetricsCore}) {
    CHECK(h.WaitUntil(regs, Res(res, "result", "ok"), [](double v) { return v >= 2; }) >= 2);
    CHECK(h.WaitFor(streams, {{"resource", res}}, 1) == 1);
  }

  const std::string text = h.Scrape();
  CHECK(text.find("# HELP neuron_deviceplugin_allocations_total ") != std::string::npos);
  CHECK(text.find("# TYPE neuron_deviceplugin_devices gauge") != std::string::npos);
  const absl::Status promtool = neuron::testing::PromtoolCheck(text);
  INFO(promtool.message());
  CHECK(promtool.ok());

  // Stops with the manager: the streams end and the server no longer answers.
  const int port = h.port();
  h.Stop();
  CHECK(h.run_status().ok());
  CHECK(neuron::testing::HttpGet(port, "/metrics").status == -1);
}

TEST_CASE("/metrics devices gauge matches what ListAndWatch advertises", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  MetricsHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf2.24xlarge")));
  REQUIRE(h.start_status().ok());
  const std::string devices = "neuron_deviceplugin_devices";
  REQUIRE(kubelet.WaitForDevices(
      kMetricsCore, [](const auto& r) { return CountHealth(r, "Healthy") == 12; }, kMetricsWait));
  CHECK(h.Value(devices, Res(kNeuron, "health", "Healthy")) == 6);
  CHECK(h.Value(devices, Res(kNeuron, "health", "Unhealthy")) == 0);
  CHECK(h.Value(devices, Res(kMetricsCore, "health", "Healthy")) == 12);
  CHECK(h.Value(devices, Res(kMetricsCore, "health", "Unhealthy")) == 0);

  h.source().SetHealthy(2, false);  // device 2 and its cores 4, 5
  REQUIRE(kubelet.WaitForDevices(
      kNeuron, [](const auto& r) { return CountHealth(r, "Unhealthy") == 1; }, kMetricsWait));
  REQUIRE(kubelet.WaitForDevices(
      kMetricsCore, [](const auto& r) { return CountHealth(r, "Unhealthy") == 2; }, kMetricsWait));
  for (const char* res : {kNeuron, kMetricsCore}) {
    INFO(res);
    const v1beta1::ListAndWatchResponse list = *kubelet.LatestDevices(res);
    for (const char* health : {"Healthy", "Unhealthy"}) {
      CHECK(h.Value(devices, Res(res, "health", health)) == CountHealth(list, health));
    }
  }
  CHECK(h.Value(devices, Res(kNeuron, "health", "Unhealthy")) == 1);
  CHECK(h.Value(devices, Res(kMetricsCore, "health", "Unhealthy")) == 2);
  CHECK(neuron::testing::PromtoolCheck(h.Scrape()).ok());
}

TEST_CASE("/metrics counts failed registrations while the kubelet is absent", "[integration]") {
  fakes::FakeKubelet kubelet;  // directory exists, kubelet.sock does not
  MetricsHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf2.xlarge")));
  REQUIRE(h.start_status().ok());
  const std::string regs = "neuron_deviceplugin_registrations_total";
  // Retried with backoff: wait for at least one failure per resource.
  for (const char* res : {kNeuron, kMetricsCore}) {
    CHECK(h.WaitUntil(regs, Res(res, "result", "error"), [](double v) { return v >= 1; }) >= 1);
  }
  CHECK(h.Value(regs, Res(kNeuron, "result", "ok")) == 0);
  CHECK(neuron::testing::HttpGet(h.port(), "/readyz").status == 503);
  CHECK(h.Value("neuron_deviceplugin_list_and_watch_streams", {{"resource", kNeuron}}) == 0);

  REQUIRE(kubelet.Start().ok());
  for (const char* res : {kNeuron, kMetricsCore}) {
    CHECK(h.WaitFor(regs, Res(res, "result", "ok"), 1) == 1);
  }
  const absl::Time ready_by = absl::Now() + kMetricsWait;
  while (neuron::testing::HttpGet(h.port(), "/readyz").status != 200 && absl::Now() < ready_by) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  CHECK(neuron::testing::HttpGet(h.port(), "/readyz").status == 200);
}

TEST_CASE("PluginMetrics has series only for the resources it serves", "[integration]") {
  PluginMetrics m({assignment::ResourceKind::kDevice});
  const std::string text = metrics::Expose(m.sources());
  CHECK(Sample(text, "neuron_deviceplugin_allocations_total", Res(kNeuron, "result", "ok")) == 0);
  CHECK(text.find(kMetricsCore) == std::string::npos);
  CHECK(text.find("neuron_deviceplugin_devices") == std::string::npos);  // nothing watched yet
  m.StreamOpened(assignment::ResourceKind::kDevice);
  m.StreamOpened(assignment::ResourceKind::kDevice);
  m.StreamClosed(assignment::ResourceKind::kDevice);
  CHECK(Sample(metrics::Expose(m.sources()), "neuron_deviceplugin_list_and_watch_streams",
               {{"resource", kNeuron}}) == 1);
  CHECK(neuron::testing::PromtoolCheck(text).ok());
}

}  // namespace
}  // namespace neuron::deviceplugin
