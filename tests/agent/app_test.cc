#include "lib/agent/app.h"

#include <filesystem>

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "nlohmann/json.hpp"
#include "tests/sysfs/temp_dir.h"
#include "tests/testing/http_get.h"

namespace neuron::agent {
namespace {

TEST_CASE("App serves inventory, metrics and health for an emulated inf2.24xlarge", "[agent]") {
  char t[] = "/tmp/agent-app-XXXXXX";
  const std::string dir = mkdtemp(t);
  AgentOptions opts;
  opts.emulate = "inf2.24xlarge";
  opts.emulate_dir = dir + "/host";
  opts.listen = "127.0.0.1:0";
  opts.node_name = "node-x";
  opts.features_dir = dir + "/features.d";
  opts.interval = absl::Milliseconds(50);
  App app(opts, Clock::Real());
  REQUIRE(app.Start().ok());
  CHECK(app.host_root() == dir + "/host");

  auto inv = testing::HttpGet(app.port(), "/inventory");
  REQUIRE(inv.status == 200);
  const auto doc = nlohmann::json::parse(inv.body);
  CHECK(doc["node"] == "node-x");
  CHECK(doc["instance_type"] == "inf2.24xlarge");
  REQUIRE(doc["devices"].size() == 6);
  CHECK(doc["devices"][0]["family"] == "inferentia2");
  CHECK(doc["devices"][0]["device_id"] == "7264");
  CHECK(doc["devices"][5]["healthy"] == true);
  CHECK(doc["total_cores"] == 12);

  CHECK(testing::HttpGet(app.port(), "/healthz").status == 200);
  CHECK(testing::HttpGet(app.port(), "/readyz").status == 200);
  const auto metrics = testing::HttpGet(app.port(), "/metrics");
  CHECK(metrics.body.find("\nneuron_node_devices 6\n") != std::string::npos);
  CHECK(metrics.body.find("neuron_agent_scrape_duration_seconds_bucket") != std::string::npos);
  CHECK(std::filesystem::exists(opts.features_dir + "/aws-neuron"));
  app.Stop();
  app.Stop();
  CHECK(testing::HttpGet(app.port(), "/healthz").status == -1);
  std::filesystem::remove_all(dir);
}

// With the full rescan an hour away, faults can reach /metrics only through the health fast
// path, which must also re-render the cached page.
TEST_CASE("App shows faults on /metrics without waiting for a rescan", "[agent]") {
  char t[] = "/tmp/agent-health-XXXXXX";
  const std::string dir = mkdtemp(t);
  AgentOptions opts;
  opts.emulate = "inf2.24xlarge";
  opts.emulate_dir = dir + "/host";
  opts.listen = "127.0.0.1:0";
  opts.interval = absl::Hours(1);
  opts.health_interval = absl::Milliseconds(20);
  App app(opts, Clock::Real());
  REQUIRE(app.Start().ok());
  auto metrics_show = [&](const std::string& line) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      if (testing::HttpGet(app.port(), "/metrics").body.find(line) != std::string::npos) {
        return true;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  };
  REQUIRE(metrics_show("\nneuron_device_healthy{device=\"2\"} 1\n"));
  namespace em = sysfs::emulation;
  REQUIRE(em::SetCounter(app.host_root(), 2, "stats/hardware/mem_ecc_uncorrected", 1).ok());
  CHECK(metrics_show("\nneuron_device_healthy{device=\"2\"} 0\n"));
  REQUIRE(em::RemoveDevice(app.host_root(), 4).ok());
  CHECK(metrics_show("\nneuron_device_healthy{device=\"4\"} 0\n"));
  CHECK(metrics_show("\nneuron_node_devices 5\n"));
  REQUIRE(em::UnbindDriver(app.host_root(), 5).ok());
  CHECK(metrics_show("\nneuron_device_healthy{device=\"5\"} 0\n"));
  CHECK(metrics_show("\nneuron_node_devices 4\n"));
  app.Stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("App on an emulated trn2.48xlarge at LNC 1, nodes scrambled: /inventory agrees",
          "[agent]") {
  sysfs::testing::TempDir dir;  // tmpfs: a trn2.48xlarge tree is thousands of files
  AgentOptions opts;
  opts.emulate = "trn2.48xlarge";
  opts.emulate_dir = dir.path();
  opts.lnc = 1;
  opts.emulate_scramble = 9;  // every device-level node elsewhere: found by name
  opts.listen = "127.0.0.1:0";
  App app(opts, Clock::Real());
  REQUIRE(app.Start().ok());
  const auto doc = nlohmann::json::parse(testing::HttpGet(app.port(), "/inventory").body);
  CHECK(doc["total_cores"] == 128);
  CHECK(doc["total_physical_cores"] == 128);
  CHECK(doc["lnc"]["value"] == 1);
  CHECK(doc["lnc"]["source"] == "flag");
  CHECK(doc["devices"][0]["cores"] == 8);
  CHECK(doc["devices"][0]["physical_cores"] == 8);
  // Each node where the scrambled tree put it, and the values read from there.
  const auto& paths = doc["devices"][0]["sysfs_paths"];
  CHECK(paths["core_count"] == sysfs::EmulatedLeafPath(9, "core_count"));
  CHECK(paths["core_count"] != "core_count");
  CHECK(paths["mem_ecc_uncorrected"] ==
        sysfs::EmulatedLeafPath(9, "stats/hardware/mem_ecc_uncorrected"));
  CHECK(doc["devices"][0]["connected_devices"].size() == 4);  // trn2's 4x4 torus
  CHECK(doc["devices"][0]["health_status"]["hw_error_event"] == 0);
  CHECK(doc["read_errors"] == 0);
  const auto metrics = testing::HttpGet(app.port(), "/metrics").body;
  CHECK(metrics.find("\nneuron_node_cores 128\n") != std::string::npos);
  CHECK(metrics.find("\nneuron_node_physical_cores 128\n") != std::string::npos);
  app.Stop();
}

TEST_CASE("App refuses --lnc 2 on a chip without LNC, naming the flag", "[agent]") {
  char t[] = "/tmp/agent-lnc-XXXXXX";
  const std::string dir = mkdtemp(t);
  {
    AgentOptions writer;  // an inf2 host tree to point --host-root at
    writer.emulate = "inf2.xlarge";
    writer.emulate_dir = dir;
    writer.listen = "127.0.0.1:0";
    App w(writer, Clock::Real());
    REQUIRE(w.Start().ok());
  }
  AgentOptions opts;
  opts.host_root = dir;
  opts.lnc = 2;
  opts.listen = "127.0.0.1:0";
  App app(opts, Clock::Real());
  const absl::Status s = app.Start();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("--lnc") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("App refuses an unknown instance type and a busy port", "[agent]") {
  AgentOptions bad;
  bad.emulate = "p4d.24xlarge";
  bad.listen = "127.0.0.1:0";
  App app(bad, Clock::Real());
  CHECK(app.Start().code() == absl::StatusCode::kNotFound);

  AgentOptions first;
  first.emulate = "inf2.xlarge";
  first.listen = "127.0.0.1:0";
  App a(first, Clock::Real());
  REQUIRE(a.Start().ok());
  AgentOptions second = first;
  second.listen = "127.0.0.1:" + std::to_string(a.port());
  App b(second, Clock::Real());
  CHECK(b.Start().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace neuron::agent
