// File: tests/cache/cache_node_e2e_test.cc
// A NeuronCache from a real registry to a pod's view, through real node-agent processes: pull,
// verify, extract, report on NeuronCacheNode, mount through the agent's CSI socket as the
// kubelet does; the compiler's path rule finds the NEFF, a new graph stays private; the faults
// the issue names (wrong chip, registry down, tag replaced, agent killed mid-extract).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/cache/cache_api.h"
#include "tests/cache/cache_e2e_env.h"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"

namespace neuron::cache::testing {
namespace {

namespace fs = std::filesystem;
using neuron::testing::CompileCacheSpec;
using neuron::testing::Eventually;
using neuron::testing::ModuleNames;

std::string Image(CacheCluster& c, const std::string& repo_tag) {
  return absl::StrCat(c.registry().host(), "/", repo_tag);
}

TEST_CASE("a NeuronCache is pulled, extracted and mounted as a private writable view",
          "[cache][e2e]") {
  CacheCluster c;
  const CompileCacheSpec spec;  // trn2, 3 modules
  const std::string digest = c.Push("team/llama:v1", spec);
  c.StartAgent("node-a", "trn2.48xlarge");
  c.ApplyCache("llama", Image(c, "team/llama:v1"), digest);
  const json rec = c.WaitForState("node-a", "llama", "Extracted", digest);
  CHECK(IntOf(Member(rec, "bytes")) > 0);

  std::string target;
  grpc::Status st = c.Publish("node-a", "trainer", "llama", &target);
  REQUIRE(st.ok());
  // The compiler's lookup: neuronxcc-<version>/MODULE_<graph>+<flags>/model.neff.
  const std::string neff = NeffFor(target, spec, ModuleNames(1));
  CHECK(ReadFile(neff).rfind(ModuleNames(1).neff_contents_prefix, 0) == 0);
  CHECK(fs::file_size(neff) == spec.neff_bytes);
  // A miss compiles and is cached for this pod only: the node's copy stays as pulled.
  const std::string node_copy = c.CacheDir("node-a") + "/images/sha256/" + digest.substr(7);
  const fs::path fresh =
      fs::path(target) / ("neuronxcc-" + spec.compiler_version) / "MODULE_new+graph";
  fs::create_directories(fresh);
  std::ofstream(fresh / "model.neff") << "compiled in the pod";
  CHECK(fs::exists(fresh / "model.neff"));
  CHECK_FALSE(fs::exists(fs::path(node_copy) / ("neuronxcc-" + spec.compiler_version) /
                         "MODULE_new+graph"));
  std::ofstream(neff, std::ios::trunc) << "overwritten in the pod";
  CHECK(ReadFile(NeffFor(node_copy, spec, ModuleNames(1)))
            .rfind(ModuleNames(1).neff_contents_prefix, 0) == 0);
  // A second pod sees the node's copy, not the first pod's writes.
  std::string other;
  REQUIRE(c.Publish("node-a", "server", "llama", &other).ok());
  CHECK_FALSE(
      fs::exists(fs::path(other) / ("neuronxcc-" + spec.compiler_version) / "MODULE_new+graph"));
  // Both pods show on the node's report, then leave it.
  REQUIRE(Eventually([&] { return MemberOrNull(c.Record("node-a", "llama"), "pods").size() == 2; },
                     absl::Seconds(30)));
  REQUIRE(c.Unpublish("node-a", "trainer").ok());
  REQUIRE(c.Unpublish("node-a", "server").ok());
  CHECK_FALSE(fs::exists(target));
  REQUIRE(Eventually([&] { return MemberOrNull(c.Record("node-a", "llama"), "pods").empty(); },
                     absl::Seconds(30)));
  // Metrics: the pull and two hits, in a page promtool accepts.
  std::string page;
  REQUIRE(Eventually(
      [&] {
        page = neuron::testing::HttpGet(c.MetricsPort("node-a"), "/metrics").body;
        return page.find("neuron_cache_mounts_total{result=\"hit\"} 2") != std::string::npos;
      },
      absl::Seconds(20)));
  CHECK(page.find("neuron_cache_fetched_bytes_total") != std::string::npos);
  CHECK(neuron::testing::PromtoolCheck(page).ok());
}

TEST_CASE("a cache compiled for another chip is Incompatible on that node and not mounted",
          "[cache][e2e]") {
  CacheCluster c;
  CompileCacheSpec trn1;
  trn1.target = "trn1";
  const std::string digest = c.Push("team/old:v1", trn1);
  c.StartAgent("node-b", "trn2.48xlarge");
  c.ApplyCache("old", Image(c, "team/old:v1"), digest);
  const json rec = c.WaitForState("node-b", "old", "Incompatible");
  CHECK(StringMember(rec, "reason") == "IncompatibleTarget");
  CHECK(StringMember(rec, "message").find("trn1") != std::string::npos);
  CHECK_FALSE(fs::exists(c.CacheDir("node-b") + "/images/sha256/" + digest.substr(7)));
  std::string target;
  grpc::Status st = c.Publish("node-b", "p", "old", &target);
  CHECK(st.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(st.error_message().find("Incompatible") != std::string::npos);
}

TEST_CASE("a registry that is down fails clearly, and the node recovers when it returns",
          "[cache][e2e]") {
  CacheCluster c;
  const std::string digest = c.Push("team/llama:v1", CompileCacheSpec{});
  c.registry().Stop();
  c.StartAgent("node-c", "trn2.48xlarge");
  c.ApplyCache("llama", Image(c, "team/llama:v1"), digest);
  const json rec = c.WaitForState("node-c", "llama", "Failed");
  CHECK(StringMember(rec, "reason") == "RegistryUnavailable");
  std::string target;
  grpc::Status st = c.Publish("node-c", "p", "llama", &target);
  CHECK(st.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(st.error_message().find("RegistryUnavailable") != std::string::npos);
}

TEST_CASE("an image replaced under the same tag reaches new pods; running pods keep theirs",
          "[cache][e2e]") {
  CacheCluster c;
  const CompileCacheSpec v1;
  const std::string d1 = c.Push("team/llama:prod", v1);
  c.StartAgent("node-d", "trn2.48xlarge");
  c.ApplyCache("llama", Image(c, "team/llama:prod"), d1);
  c.WaitForState("node-d", "llama", "Extracted", d1);
  std::string old_view;
  REQUIRE(c.Publish("node-d", "old-pod", "llama", &old_view).ok());

  CompileCacheSpec v2;
  v2.modules = 5;
  const std::string d2 = c.Push("team/llama:prod", v2);
  REQUIRE(d2 != d1);
  c.SetResolved("llama", d2);  // the operator's re-resolve
  const json rec = c.WaitForState("node-d", "llama", "Extracted", d2);
  // The running pod is reported on its old digest (the operator counts it outdated).
  REQUIRE(MemberOrNull(rec, "pods").size() == 1);
  CHECK(StringMember(MemberOrNull(rec, "pods")[0], "digest") == d1);
  CHECK(fs::exists(NeffFor(old_view, v1, ModuleNames(1))));
  CHECK_FALSE(fs::exists(NeffFor(old_view, v2, ModuleNames(4))));
  std::string new_view;
  REQUIRE(c.Publish("node-d", "new-pod", "llama", &new_view).ok());
  CHECK(fs::exists(NeffFor(new_view, v2, ModuleNames(4))));
  // Once the old pod is gone, nothing holds d1: it is collected.
  REQUIRE(c.Unpublish("node-d", "old-pod").ok());
  const std::string old_copy = c.CacheDir("node-d") + "/images/sha256/" + d1.substr(7);
  CHECK(Eventually([&] { return !fs::exists(old_copy); }, absl::Seconds(60)));
  REQUIRE(c.Unpublish("node-d", "new-pod").ok());
}

TEST_CASE("an agent killed mid-extract never exposes a partial cache and finishes on restart",
          "[cache][e2e]") {
  CacheCluster c;
  CompileCacheSpec big;
  big.modules = 12;
  big.neff_bytes = 16ull << 20;  // ~200 MB: long enough to be caught in the middle
  const std::string digest = c.Push("team/big:v1", big);
  c.StartAgent("node-e", "trn2.48xlarge");
  c.ApplyCache("big", Image(c, "team/big:v1"), digest);
  c.WaitForState("node-e", "big", "Pulling", digest);
  const std::string image_dir = c.CacheDir("node-e") + "/images/sha256/" + digest.substr(7);
  const std::string staging = c.CacheDir("node-e") + "/staging";
  REQUIRE(Eventually([&] { return !fs::is_empty(staging); }, absl::Seconds(60)));
  c.StopAgent("node-e", /*kill=*/true);
  CHECK_FALSE(fs::exists(image_dir));  // nothing half-extracted where a mount could find it
  std::string target;
  c.StartAgent("node-e", "trn2.48xlarge");
  c.WaitForState("node-e", "big", "Extracted", digest, absl::Seconds(120));
  for (const auto& e : fs::directory_iterator(staging)) FAIL("left in staging: " << e.path());
  REQUIRE(c.Publish("node-e", "p", "big", &target).ok());
  for (int i = 0; i < big.modules; ++i) {
    CHECK(fs::file_size(NeffFor(target, big, ModuleNames(i))) == big.neff_bytes);
  }
  REQUIRE(c.Unpublish("node-e", "p").ok());
}

}  // namespace
}  // namespace neuron::cache::testing

namespace neuron::cache::testing {
namespace {

TEST_CASE("a deleted cache is not given to new pods but stays reported while a pod uses it",
          "[cache][e2e]") {
  CacheCluster c;
  const std::string digest = c.Push("team/llama:v1", neuron::testing::CompileCacheSpec{});
  c.StartAgent("node-f", "trn2.48xlarge");
  c.ApplyCache("llama", absl::StrCat(c.registry().host(), "/team/llama:v1"), digest);
  c.WaitForState("node-f", "llama", "Extracted", digest);
  std::string view;
  REQUIRE(c.Publish("node-f", "running", "llama", &view).ok());
  REQUIRE(c.client().Delete(kNeuronCaches, "team", "llama").ok());
  // The record stays (the operator's finalizer waits on its pods), marked retired.
  REQUIRE(neuron::testing::Eventually(
      [&] { return StringMember(c.Record("node-f", "llama"), "reason") == "Retired"; },
      absl::Seconds(30)));
  CHECK(MemberOrNull(c.Record("node-f", "llama"), "pods").size() == 1);
  std::string refused;
  CHECK(c.Publish("node-f", "new", "llama", &refused).error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(std::filesystem::exists(view + "/neuronxcc-" +
                                neuron::testing::CompileCacheSpec{}.compiler_version));
  REQUIRE(c.Unpublish("node-f", "running").ok());
  CHECK(neuron::testing::Eventually([&] { return c.Record("node-f", "llama").is_null(); },
                                    absl::Seconds(30)));
}

}  // namespace
}  // namespace neuron::cache::testing
