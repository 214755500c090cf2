// End-to-end: the real neuron-node-agent binary over an emulated host, scraped over HTTP.
#include <filesystem>
#include <regex>

#include "absl/strings/numbers.h"
#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "nlohmann/json.hpp"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"
#include "tests/testing/subprocess.h"

namespace neuron {
namespace {

using testing::BinaryPath;
using testing::Eventually;
using testing::HttpGet;
using testing::Subprocess;

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/agent-e2e-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// Starts the agent and returns its HTTP port (parsed from its log), or -1.
int StartAgent(Subprocess& agent) {
  const std::string log = agent.WaitForLog("node agent ready", absl::Seconds(20));
  std::smatch m;
  static const std::regex kPort("listening address=127\\.0\\.0\\.1:([0-9]+)");
  if (!std::regex_search(log, m, kPort)) return -1;
  int port = -1;
  return absl::SimpleAtoi(m[1].str(), &port) ? port : -1;
}

// The value of the sample `series` (exact name+labels) in a scrape, or -1.
double Sample(int port, const std::string& series) {
  const std::string body = HttpGet(port, "/metrics").body;
  const size_t at = body.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  const size_t start = at + series.size() + 2;
  double v = -1;
  return absl::SimpleAtod(body.substr(start, body.find('\n', start) - start), &v) ? v : -1;
}

TEST_CASE("agent on an emulated trn1.32xlarge: scrape, promtool, ECC fault and recovery", "[e2e]") {
  TempDir tmp;
  const std::string root = tmp.path + "/host";
  Subprocess agent({BinaryPath("neuron-node-agent"), "--emulate=trn1.32xlarge",
                    "--emulate-dir=" + root, "--listen=127.0.0.1:0", "--node-name=trn-node",
                    "--interval=100ms", "--healthy-after=1s", "--features-dir=" + tmp.path + "/fd"},
                   tmp.path + "/agent.log");
  const int port = StartAgent(agent);
  INFO(agent.Log());
  REQUIRE(port > 0);

  const auto scrape = HttpGet(port, "/metrics");
  REQUIRE(scrape.status == 200);
  CHECK(scrape.content_type == "text/plain; version=0.0.4; charset=utf-8");
  const absl::Status promtool = testing::PromtoolCheck(scrape.body);
  INFO(promtool.message());
  CHECK(promtool.ok());
  CHECK(Sample(port, "neuron_node_devices") == 16);
  CHECK(Sample(port, "neuron_node_cores") == 32);
  CHECK(Sample(port, "neuron_device_healthy{device=\"3\"}") == 1);

  const auto inv = nlohmann::json::parse(HttpGet(port, "/inventory").body);
  CHECK(inv["instance_type"] == "trn1.32xlarge");
  CHECK(inv["devices"].size() == 16);
  CHECK(inv["devices"][0]["connected_devices"].size() == 4);

  // An uncorrectable ECC error on device 3: unhealthy, then healthy after the quiet period.
  REQUIRE(sysfs::emulation::SetCounter(root, 3, "stats/hardware/mem_ecc_uncorrected", 1).ok());
  CHECK(Eventually([&] { return Sample(port, "neuron_device_healthy{device=\"3\"}") == 0; }));
  CHECK(Sample(port, "neuron_device_healthy{device=\"2\"}") == 1);
  CHECK(
      Sample(port,
             "neuron_device_hardware_errors_total{device=\"3\",counter=\"mem_ecc_uncorrected\"}") ==
      1);
  CHECK(Eventually([&] { return Sample(port, "neuron_device_healthy{device=\"3\"}") == 1; }));
  CHECK(agent.Log().find("inventory changed") != std::string::npos);
  CHECK(agent.Terminate() == 0);
}

TEST_CASE("agent keeps serving through garbled sysfs files and a vanished device", "[e2e]") {
  TempDir tmp;
  const std::string root = tmp.path + "/host";
  Subprocess agent({BinaryPath("neuron-node-agent"), "--emulate=inf2.48xlarge",
                    "--emulate-dir=" + root, "--listen=127.0.0.1:0", "--interval=100ms"},
                   tmp.path + "/agent.log");
  const int port = StartAgent(agent);
  INFO(agent.Log());
  REQUIRE(port > 0);
  const double errors_before = Sample(port, "neuron_agent_sysfs_read_errors_total");

  using sysfs::emulation::WriteAttribute;
  REQUIRE(WriteAttribute(root, 1, "stats/hardware/sram_ecc_uncorrected", "not-a-number\n").ok());
  REQUIRE(WriteAttribute(root, 2, "neuron_core0/stats/status/success/total", "").ok());
  REQUIRE(WriteAttribute(root, 3, "stats/power/utilization", "1,2,3").ok());
  REQUIRE(WriteAttribute(root, 4, "neuron_core1/stats/status/failure/total",
                         "99999999999999999999999\n")
              .ok());
  REQUIRE(sysfs::emulation::RemoveAttribute(root, 5, "core_count").ok());
  CHECK(Eventually(
      [&] { return Sample(port, "neuron_agent_sysfs_read_errors_total") > errors_before; }));

  REQUIRE(sysfs::emulation::RemoveDevice(root, 7).ok());
  CHECK(Eventually([&] { return Sample(port, "neuron_device_healthy{device=\"7\"}") == 0; }));
  CHECK(Sample(port, "neuron_node_devices") == 11);
  // Removal takes two steps (class device, then PCI function); a poll between them reports
  // "driver unbound" until the next one sees the device gone: wait for the final state.
  auto reason = [&] {
    const auto inv = nlohmann::json::parse(HttpGet(port, "/inventory").body, nullptr, false);
    return inv.is_discarded() ? std::string() : inv["devices"][7].value("unhealthy_reason", "");
  };
  CHECK(Eventually([&] { return reason() == "vanished"; }));
  CHECK(testing::PromtoolCheck(HttpGet(port, "/metrics").body).ok());
  CHECK(agent.Running());
  CHECK(agent.Terminate() == 0);
}

TEST_CASE("agent on this machine's real PCI bus reports zero Neuron devices", "[e2e]") {
  if (!std::filesystem::exists("/sys/bus/pci/devices")) {
    WARN("no /sys/bus/pci on this machine; skipping the real-hardware check");
    return;
  }
  TempDir tmp;
  Subprocess agent({BinaryPath("neuron-node-agent"), "--host-root=/", "--listen=127.0.0.1:0"},
                   tmp.path + "/agent.log");
  const int port = StartAgent(agent);
  INFO(agent.Log());
  REQUIRE(port > 0);
  CHECK(Sample(port, "neuron_node_devices") == 0);
  CHECK(HttpGet(port, "/readyz").status == 200);
  const auto inv = nlohmann::json::parse(HttpGet(port, "/inventory").body);
  CHECK(inv["devices"].empty());
  CHECK(agent.Terminate() == 0);
}

TEST_CASE("agent rejects bad flags and unknown shapes with one clear line", "[e2e]") {
  TempDir tmp;
  Subprocess bad_flag({BinaryPath("neuron-node-agent"), "--interval=soon"}, tmp.path + "/a.log");
  CHECK(Eventually([&] { return !bad_flag.Running(); }));
  CHECK(bad_flag.Terminate() == 2);
  CHECK(
      bad_flag.Log() ==
      "neuron-node-agent: --interval: \"soon\" is not a positive duration (e.g. 500ms, 5s, 1m)\n");

  Subprocess bad_shape(
      {BinaryPath("neuron-node-agent"), "--emulate=p4d.24xlarge", "--listen=127.0.0.1:0"},
      tmp.path + "/b.log");
  CHECK(Eventually([&] { return !bad_shape.Running(); }));
  CHECK(bad_shape.Terminate() == 1);
  CHECK(bad_shape.Log().find("p4d.24xlarge") != std::string::npos);

  Subprocess bad_lnc({BinaryPath("neuron-node-agent"), "--lnc=3"}, tmp.path + "/c.log");
  CHECK(Eventually([&] { return !bad_lnc.Running(); }));
  CHECK(bad_lnc.Terminate() == 2);
  CHECK(bad_lnc.Log() == "neuron-node-agent: --lnc: LNC 3 is not supported (1 or 2)\n");

  Subprocess bad_seed({BinaryPath("neuron-node-agent"), "--emulate-scramble=-1"},
                      tmp.path + "/d.log");
  CHECK(Eventually([&] { return !bad_seed.Running(); }));
  CHECK(bad_seed.Terminate() == 2);
  CHECK(bad_seed.Log() == "neuron-node-agent: --emulate-scramble must be 0 or a positive seed\n");
}

}  // namespace
}  // namespace neuron
