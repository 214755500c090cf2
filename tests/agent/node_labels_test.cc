#include "lib/agent/node_labels.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "catch2/catch.hpp"

namespace neuron::agent {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char t[] = "/tmp/labels-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inventory::Inventory Node(int devices) {
  inventory::Inventory inv;
  inv.instance_type = "inf2.48xlarge";
  for (int i = 0; i < devices; ++i) {
    inventory::Device d;
    d.index = i;
    d.model = topology::ModelForPciDevice(0x7264);
    d.core_count = 2;
    d.physical_cores = 2;
    inv.devices.push_back(d);
  }
  inv.total_cores = 2 * devices;
  inv.total_physical_cores = 2 * devices;
  inv.lnc = 1;
  return inv;
}

TEST_CASE("NodeLabels describes the node in NFD's default namespace", "[agent]") {
  const Labels labels = NodeLabels(Node(12));
  const Labels want = {
      {"feature.node.kubernetes.io/aws-neuron", "true"},
      {"feature.node.kubernetes.io/aws-neuron-family", "inferentia2"},
      {"feature.node.kubernetes.io/aws-neuron-device-count", "12"},
      {"feature.node.kubernetes.io/aws-neuron-core-count", "24"},
      {"feature.node.kubernetes.io/aws-neuron-lnc", "1"},
      {"feature.node.kubernetes.io/aws-neuron-physical-core-count", "24"},
      {"feature.node.kubernetes.io/aws-neuron-instance-type", "inf2.48xlarge"},
  };
  CHECK(labels == want);
  CHECK(NodeLabels(Node(0)).empty());
  // While LNC is unreadable the logical count and the lnc label are withheld, not guessed.
  inventory::Inventory unknown = Node(2);
  unknown.lnc = 0;
  unknown.total_cores = 0;
  for (const auto& [k, v] : NodeLabels(unknown)) {
    CHECK(k != "feature.node.kubernetes.io/aws-neuron-core-count");
    CHECK(k != "feature.node.kubernetes.io/aws-neuron-lnc");
  }
}

TEST_CASE("WriteFeatureFile writes atomically, skips unchanged content, removes when empty",
          "[agent]") {
  TempDir dir;
  const fs::path file = dir.path / kFeatureFileName;
  REQUIRE(WriteFeatureFile(dir.path, kFeatureFileName, NodeLabels(Node(1))).ok());
  const std::string body = Slurp(file);
  CHECK(body.find("feature.node.kubernetes.io/aws-neuron-device-count=1\n") != std::string::npos);
  // No dot-file left behind (NFD ignores them, but they should not pile up).
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 1);

  struct stat before {};
  REQUIRE(stat(file.c_str(), &before) == 0);
  REQUIRE(WriteFeatureFile(dir.path, kFeatureFileName, NodeLabels(Node(1))).ok());
  struct stat after {};
  REQUIRE(stat(file.c_str(), &after) == 0);
  CHECK(before.st_ino == after.st_ino);  // unchanged content: not rewritten

  REQUIRE(WriteFeatureFile(dir.path, kFeatureFileName, NodeLabels(Node(2))).ok());
  CHECK(Slurp(file).find("aws-neuron-device-count=2\n") != std::string::npos);

  REQUIRE(WriteFeatureFile(dir.path, kFeatureFileName, {}).ok());
  CHECK_FALSE(fs::exists(file));
}

TEST_CASE("WriteFeatureFile reports an unusable directory", "[agent]") {
  TempDir dir;
  const fs::path blocker = dir.path / "not-a-dir";
  std::ofstream(blocker) << "x";
  const absl::Status s = WriteFeatureFile(blocker.string(), kFeatureFileName, NodeLabels(Node(1)));
  CHECK(s.code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace neuron::agent
