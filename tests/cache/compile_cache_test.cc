// Compile-cache parsing, scanning and node compatibility on generated cache trees.
#include "lib/cache/compile_cache.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "absl/strings/match.h"
#include "tests/cache/layer_test_util.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;
using topology::Family;

TEST_CASE("ParseCompileTarget reads every spelling of --target", "[compile]") {
  CHECK(ParseCompileTarget("--target=trn2 --model-type=transformer") == "trn2");
  CHECK(ParseCompileTarget("--target trn1") == "trn1");
  CHECK(ParseCompileTarget("--model-type=transformer\n--target\ninf2\n-O1\n") == "inf2");
  CHECK(ParseCompileTarget("['--target=trn2', '-O1']") == "trn2");
  CHECK(ParseCompileTarget("[\"--target\", \"TRN3\"]") == "trn3");
  CHECK(ParseCompileTarget("--target=trn1 --target=trn2") == "trn2");  // the last wins
  CHECK(ParseCompileTarget("-O2 --model-type=transformer") == std::nullopt);
  CHECK(ParseCompileTarget("--target") == std::nullopt);
  CHECK(ParseCompileTarget("--target=") == std::nullopt);
  CHECK(ParseCompileTarget("--targets=trn2") == std::nullopt);
  CHECK(ParseCompileTarget("--target=../../etc") == std::nullopt);
  CHECK(ParseCompileTarget("") == std::nullopt);
}

void Module(const std::string& root, const std::string& name, const std::string& flags,
            bool neff = true) {
  const std::string dir = root + "/neuronxcc-2.15.128.0+56dc5a86/" + name;
  if (neff) testing::WriteFile(dir + "/model.neff", "NEFF");
  testing::WriteFile(dir + "/model.hlo_module.pb", "HLO");
  if (!flags.empty()) testing::WriteFile(dir + "/compile_flags.txt", flags);
}

TEST_CASE("ScanCompileCache counts modules and their targets", "[compile]") {
  testing::ScratchDir tmp;
  const std::string root = tmp.Sub("cache");
  Module(root, "MODULE_111+aaa", "--target=trn2 --model-type=transformer");
  Module(root, "MODULE_222+bbb", "['--target=trn2', '-O1']");
  Module(root, "MODULE_333+ccc", "--auto-cast=none");               // no target named
  Module(root, "MODULE_444+ddd", "--target=trn1", /*neff=*/false);  // failed compile
  // A symlink to a module outside the cache is not followed.
  Module(tmp.Sub("elsewhere"), "MODULE_555+eee", "--target=inf2");
  fs::create_directory_symlink(tmp.Sub("elsewhere/neuronxcc-2.15.128.0+56dc5a86/MODULE_555+eee"),
                               root + "/neuronxcc-2.15.128.0+56dc5a86/MODULE_555+eee");

  absl::StatusOr<CompileCacheSummary> summary = ScanCompileCache(root);
  REQUIRE(summary.ok());
  CHECK(summary->modules == 3);
  CHECK(summary->targets == std::set<std::string>{"trn2"});
  CHECK(CheckCompatible(*summary, Family::kTrainium2).ok());
  const absl::Status trn1 = CheckCompatible(*summary, Family::kTrainium);
  CHECK(trn1.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(trn1.message(), "compiled for trn2"));
  CHECK(absl::StrContains(trn1.message(), "needs target trn1"));

  CHECK(ScanCompileCache(tmp.Sub("missing")).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("CheckCompatible and CompilerTargetFor follow the node's family", "[compile]") {
  CHECK(CompilerTargetFor(Family::kInferentia2) == "inf2");
  CHECK(CompilerTargetFor(Family::kTrainium) == "trn1");
  CHECK(CompilerTargetFor(Family::kTrainium2) == "trn2");
  CHECK(CompilerTargetFor(Family::kTrainium3) == "trn3");
  CHECK(CompilerTargetFor(Family::kInferentia) == std::nullopt);

  CompileCacheSummary none;
  none.modules = 4;
  CHECK(CheckCompatible(none, Family::kTrainium).ok());
  CHECK(CheckCompatible(none, Family::kInferentia).ok());

  CompileCacheSummary mixed;
  mixed.targets = {"trn1", "trn2"};
  const absl::Status s = CheckCompatible(mixed, Family::kTrainium2);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(s.message(), "compiled for trn1"));
  CompileCacheSummary inf2;
  inf2.targets = {"inf2"};
  CHECK(CheckCompatible(inf2, Family::kInferentia).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("NeffPath is where the compiler looks", "[compile]") {
  CHECK(NeffPath("/var/cache/neuron/", "2.15.128.0+56dc5a86", "111", "aaa") ==
        "/var/cache/neuron/neuronxcc-2.15.128.0+56dc5a86/MODULE_111+aaa/model.neff");
  CHECK(NeffPath("/c", "neuronxcc-2.16", "g", "f") == "/c/neuronxcc-2.16/MODULE_g+f/model.neff");
}

}  // namespace
}  // namespace neuron::cache
