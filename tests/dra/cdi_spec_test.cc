// CDI specs for prepared claims: checked against the rules of the CDI spec (SPEC.md, v0.6.0)
// that a runtime's loader enforces, and written and removed as whole files.
#include "lib/dra/cdi_spec.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "lib/dra/atomic_file.h"
#include "nlohmann/json.hpp"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

using nlohmann::json;
using sysfs::testing::TempDir;

constexpr char kUid[] = "0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90";

// The spec's rules, as a runtime's CDI loader applies them; "" when the spec is valid.
std::string CdiViolation(const json& spec) {
  static const std::set<std::string> kTop = {"cdiVersion", "kind", "annotations", "devices",
                                             "containerEdits"};
  static const std::set<std::string> kEdits = {"env", "deviceNodes", "mounts", "hooks"};
  static const std::set<std::string> kNode = {"path",     "hostPath",    "type", "major", "minor",
                                              "fileMode", "permissions", "uid",  "gid"};
  static const std::set<std::string> kMount = {"hostPath", "containerPath", "type", "options"};
  static const std::regex kSemver(R"(\d+\.\d+\.\d+)");
  // vendor: a DNS-ish name starting with a letter; class: letters, digits, _-. inside.
  static const std::regex kKind(
      R"([A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]/[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?)");
  static const std::regex kName(R"([A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?)");
  static const std::regex kEnv(R"([A-Za-z_][A-Za-z0-9_]*=.*)");
  for (const auto& [k, v] : spec.items()) {
    if (kTop.count(k) == 0) return "unknown field " + k;  // loaders refuse unknown fields
  }
  if (!spec.value("cdiVersion", json()).is_string()) return "cdiVersion missing";
  if (!std::regex_match(spec["cdiVersion"].get<std::string>(), kSemver)) return "cdiVersion";
  if (!spec.value("kind", json()).is_string()) return "kind missing";
  if (!std::regex_match(spec["kind"].get<std::string>(), kKind)) return "kind not vendor/class";
  if (!spec.value("devices", json()).is_array() || spec["devices"].empty()) return "no devices";
  for (const json& d : spec["devices"]) {
    if (!d.value("name", json()).is_string()) return "device without name";
    if (!std::regex_match(d["name"].get<std::string>(), kName)) return "bad device name";
    const json& edits = d.value("containerEdits", json::object());
    if (edits.empty()) return "device without edits";
    for (const auto& [k, v] : edits.items()) {
      if (kEdits.count(k) == 0) return "unknown edit " + k;
    }
    for (const json& n : edits.value("deviceNodes", json::array())) {
      for (const auto& [k, v] : n.items()) {
        if (kNode.count(k) == 0) return "unknown device node field " + k;
      }
      if (!n.value("path", json()).is_string()) return "device node without path";
    }
    for (const json& e : edits.value("env", json::array())) {
      if (!e.is_string() || !std::regex_match(e.get<std::string>(), kEnv)) return "bad env";
    }
    for (const json& m : edits.value("mounts", json::array())) {
      for (const auto& [k, v] : m.items()) {
        if (kMount.count(k) == 0) return "unknown mount field " + k;
      }
      if (!m.value("hostPath", json()).is_string() ||
          !m.value("containerPath", json()).is_string()) {
        return "mount without hostPath or containerPath";
      }
      for (const json& o : m.value("options", json::array())) {
        if (!o.is_string()) return "mount option not a string";
      }
    }
  }
  return "";
}

ClaimDevices Claim() {
  ClaimDevices c;
  c.claim_uid = kUid;
  c.devices = {5, 4};
  c.visible_cores = {0, 1, 2, 3, 6};
  c.logical_nc_config = 1;
  return c;
}

TEST_CASE("a claim's spec: one device named by the claim UID, its nodes and environment") {
  absl::StatusOr<json> spec = BuildCdiSpec(Claim());
  REQUIRE(spec.ok());
  CHECK(CdiViolation(*spec) == "");
  CHECK(*spec == json::parse(R"({
    "cdiVersion": "0.6.0",
    "kind": "neuron.aws.com/device",
    "devices": [{
      "name": "0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90",
      "containerEdits": {
        "deviceNodes": [
          {"path": "/dev/neuron4", "hostPath": "/dev/neuron4", "permissions": "rw"},
          {"path": "/dev/neuron5", "hostPath": "/dev/neuron5", "permissions": "rw"}],
        "env": ["NEURON_RT_VISIBLE_CORES=0-3,6", "NEURON_LOGICAL_NC_CONFIG=1"]
      }
    }]
  })"));
  CHECK(CdiDeviceId(kUid) == std::string("neuron.aws.com/device=") + kUid);
}

TEST_CASE("emulated nodes map every device node to one host path; unset env stays out") {
  ClaimDevices c = Claim();
  c.device_host_path = "/dev/null";
  c.visible_cores.clear();
  c.logical_nc_config.reset();
  const json spec = *BuildCdiSpec(c);
  CHECK(CdiViolation(spec) == "");
  const json& edits = spec["devices"][0]["containerEdits"];
  CHECK(edits["deviceNodes"][0]["hostPath"] == "/dev/null");
  CHECK(edits["deviceNodes"][1]["path"] == "/dev/neuron5");
  CHECK_FALSE(edits.contains("env"));
}

TEST_CASE("further variables (an UltraServer claim's) follow the Neuron ones in order") {
  ClaimDevices c = Claim();
  c.env = {{"NEURON_RT_ULTRASERVER_MODE", "1"}, {"NEURON_GLOBAL_TOPOID0_HOST", ""}};
  const json spec = *BuildCdiSpec(c);
  CHECK(CdiViolation(spec) == "");
  CHECK(spec["devices"][0]["containerEdits"]["env"] ==
        json{"NEURON_RT_VISIBLE_CORES=0-3,6", "NEURON_LOGICAL_NC_CONFIG=1",
             "NEURON_RT_ULTRASERVER_MODE=1", "NEURON_GLOBAL_TOPOID0_HOST="});
}

TEST_CASE("a compile cache's directory is bind-mounted where the claim asked") {
  ClaimDevices c = Claim();
  c.mounts = {
      {"/var/lib/neuron/cache/views/u1", "/var/tmp/neuron-compile-cache", {"rbind", "rw"}, ""}};
  const json spec = *BuildCdiSpec(c);
  CHECK(CdiViolation(spec) == "");
  CHECK(spec["devices"][0]["containerEdits"]["mounts"] ==
        json::parse(R"([{"hostPath": "/var/lib/neuron/cache/views/u1",
                         "containerPath": "/var/tmp/neuron-compile-cache",
                         "options": ["rbind", "rw"]}])"));
  c.mounts[0].type = "bind";
  CHECK(BuildCdiSpec(c)->at("devices")[0]["containerEdits"]["mounts"][0]["type"] == "bind");
  CHECK_FALSE(BuildCdiSpec(Claim())->at("devices")[0]["containerEdits"].contains("mounts"));
  for (const char* bad : {"", "relative/dir", "/tab\there", "/\xc3\xbc"}) {
    INFO(bad);
    c.mounts[0].host_path = bad;
    CHECK(BuildCdiSpec(c).status().code() == absl::StatusCode::kInvalidArgument);
    c.mounts[0].host_path = "/ok";
    c.mounts[0].container_path = bad;
    CHECK(BuildCdiSpec(c).status().code() == absl::StatusCode::kInvalidArgument);
    c.mounts[0].container_path = "/ok";
  }
}

TEST_CASE("claims that cannot become a valid spec are refused") {
  for (const char* uid : {"", "-abc", "abc-", "a/b", "../x", "a b", "ü"}) {
    INFO(uid);
    ClaimDevices c = Claim();
    c.claim_uid = uid;
    CHECK(BuildCdiSpec(c).status().code() == absl::StatusCode::kInvalidArgument);
  }
  ClaimDevices c = Claim();
  c.devices.clear();
  CHECK_FALSE(BuildCdiSpec(c).ok());
  c = Claim();
  c.devices = {-1};
  CHECK_FALSE(BuildCdiSpec(c).ok());
}

TEST_CASE("the checker itself catches what runtimes refuse") {
  json spec = *BuildCdiSpec(Claim());
  json bad = spec;
  bad["kind"] = "neuron";
  CHECK(CdiViolation(bad) != "");
  bad = spec;
  bad["devices"][0]["name"] = "-x";
  CHECK(CdiViolation(bad) != "");
  bad = spec;
  bad["devices"][0]["containerEdits"]["deviceNodes"][0].erase("path");
  CHECK(CdiViolation(bad) != "");
  bad = spec;
  bad["extra"] = 1;
  CHECK(CdiViolation(bad) != "");
}

TEST_CASE("core ranges") {
  CHECK(FormatCoreRanges({}) == "");
  CHECK(FormatCoreRanges({5}) == "5");
  CHECK(FormatCoreRanges({3, 0, 1, 2, 6, 6}) == "0-3,6");
  CHECK(FormatCoreRanges({0, 2, 4}) == "0,2,4");
}

TEST_CASE("specs are written whole into the given directory and removed again") {
  TempDir dir;
  absl::StatusOr<std::string> id = WriteCdiSpec(dir.path(), Claim());
  REQUIRE(id.ok());
  CHECK(*id == CdiDeviceId(kUid));
  const std::string path = dir.path() + "/" + CdiSpecFileName(kUid);
  CHECK(CdiSpecFileName(kUid) == std::string("neuron.aws.com-device_") + kUid + ".json");
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  REQUIRE(text.ok());
  CHECK(json::parse(*text) == *BuildCdiSpec(Claim()));
  // Only the spec is left behind: no temporary file for a CDI cache to trip over.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.exists() ? 1 : 0;
  CHECK(files == 1);

  ClaimDevices changed = Claim();
  changed.devices = {7};
  REQUIRE(WriteCdiSpec(dir.path(), changed).ok());  // re-prepare replaces the file
  CHECK(json::parse(*ReadWholeFile(path))["devices"][0]["containerEdits"]["deviceNodes"].size() ==
        1);

  CHECK(RemoveCdiSpec(dir.path(), kUid).ok());
  CHECK(ReadWholeFile(path).status().code() == absl::StatusCode::kNotFound);
  CHECK(RemoveCdiSpec(dir.path(), kUid).ok());  // already gone: fine
  CHECK(RemoveCdiSpec(dir.path(), "../escape").code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a directory that does not exist is an error, not a crash") {
  CHECK_FALSE(WriteCdiSpec("/nonexistent-neuron-cdi-dir", Claim()).ok());
}

}  // namespace
}  // namespace neuron::dra
