// The prepared-claims checkpoint: round trip, every kind of damage detected (never a crash),
// and replacement that readers see whole.
#include "lib/dra/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "lib/base/sha256.h"
#include "lib/dra/atomic_file.h"
#include "nlohmann/json.hpp"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

using sysfs::testing::TempDir;

Checkpoint Sample() {
  Checkpoint c;
  c.claims["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"] = {
      "ml",
      "pod0-neurons-zdk76",
      ClaimState::kPrepared,
      {{{"neurons"},
        "ip-1-1-1-1.region.compute.internal",
        "neurondevice2",
        {"neuron.aws.com/device=0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"}},
       {{"neurons"},
        "ip-1-1-1-1.region.compute.internal",
        "neurondevice3",
        {"neuron.aws.com/device=0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"}}},
      PreparedCache{"NeuronCache", "ml", "llama-70b", "/var/tmp/neuron-compile-cache"}};
  c.claims["7f1e2d3c-0000-4000-8000-000000000001"] = {
      "default", "half", ClaimState::kPreparing, {}, {}};
  return c;
}

std::string Text(const Checkpoint& c) {
  absl::StatusOr<std::string> t = SerializeCheckpoint(c);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("a checkpoint reads back exactly as it was written") {
  const std::string text = Text(Sample());
  absl::StatusOr<Checkpoint> back = ParseCheckpoint(text);
  REQUIRE(back.ok());
  CHECK(*back == Sample());
  CHECK(Text(*back) == text);  // canonical: the same state, the same bytes
  CHECK(ParseCheckpoint(Text(Checkpoint{}))->claims.empty());
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["kind"] == "NeuronDraCheckpoint");
  CHECK(j["version"] == 1);
  CHECK(j["claims"]["7f1e2d3c-0000-4000-8000-000000000001"]["state"] == "preparing");
  CHECK(j["claims"]["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"]["compileCache"] ==
        nlohmann::json{{"kind", "NeuronCache"},
                       {"namespace", "ml"},
                       {"name", "llama-70b"},
                       {"mountPath", "/var/tmp/neuron-compile-cache"}});
  CHECK_FALSE(j["claims"]["7f1e2d3c-0000-4000-8000-000000000001"].contains("compileCache"));
}

TEST_CASE("a truncated checkpoint is refused at every length") {
  const std::string text = Text(Sample());
  for (size_t n = 0; n < text.size(); ++n) {
    absl::StatusOr<Checkpoint> c = ParseCheckpoint(std::string_view(text).substr(0, n));
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == absl::StatusCode::kDataLoss);
  }
}

TEST_CASE("any changed byte is detected") {
  const std::string text = Text(Sample());
  for (size_t i = 0; i < text.size(); ++i) {
    for (unsigned char flip : {0x01, 0x20, 0x80}) {
      std::string bad = text;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ flip);
      absl::StatusOr<Checkpoint> c = ParseCheckpoint(bad);
      if (c.ok()) CHECK(*c == Sample());  // only a change that means nothing may pass
    }
  }
  std::string edited = text;
  edited.replace(edited.find("neurondevice2"), 13, "neurondevice9");
  CHECK_THAT(std::string(ParseCheckpoint(edited).status().message()),
             Catch::Contains("checksum mismatch"));
}

TEST_CASE("well-formed JSON that is not our checkpoint is refused with a reason") {
  using nlohmann::json;
  // Re-seal a document with a valid checksum, so the field checks themselves are reached.
  const auto sealed = [](json doc) {
    doc.erase("checksum");
    doc["checksum"] = Sha256Hex(doc.dump());
    return doc.dump();
  };
  const json good = json::parse(Text(Sample()));
  json d = good;
  d["version"] = 2;
  CHECK(ParseCheckpoint(sealed(d)).status().code() == absl::StatusCode::kFailedPrecondition);
  d = good;
  d["claims"]["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"]["state"] = "done";
  CHECK_THAT(std::string(ParseCheckpoint(sealed(d)).status().message()),
             Catch::Contains("unknown claim state"));
  d = good;
  d["claims"]["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"]["devices"][0]["cdiDeviceIds"] = {1};
  CHECK_THAT(std::string(ParseCheckpoint(sealed(d)).status().message()),
             Catch::Contains("cdiDeviceIds holds a non-string"));
  d = good;
  d["claims"]["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"]["compileCache"] = "llama-70b";
  CHECK_THAT(std::string(ParseCheckpoint(sealed(d)).status().message()),
             Catch::Contains("compileCache is not an object"));
  d["claims"]["0b4d2c5e-6a1f-4e3b-9c7d-2f8e1a6b3c90"]["compileCache"] = {{"kind", "NeuronCache"}};
  CHECK_THAT(std::string(ParseCheckpoint(sealed(d)).status().message()),
             Catch::Contains("namespace is not a string"));
  d = good;
  d["claims"] = json::array();
  CHECK_FALSE(ParseCheckpoint(sealed(d)).ok());
  d = good;
  d.erase("kind");
  CHECK_FALSE(ParseCheckpoint(sealed(d)).ok());
  for (const char* in : {"", "null", "[]", "{}", "\"x\"", "{\"kind\":\"NeuronDraCheckpoint\"}"}) {
    INFO(in);
    CHECK(ParseCheckpoint(in).status().code() == absl::StatusCode::kDataLoss);
  }
  CHECK_FALSE(ParseCheckpoint(std::string(1 << 20, '[')).ok());  // deep nesting: no stack blowup
}

TEST_CASE("strings that are not UTF-8 are refused at save, not mangled") {
  Checkpoint c = Sample();
  c.claims.begin()->second.name = "bad\xff";
  CHECK(SerializeCheckpoint(c).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("save replaces the file atomically; load reports damage with the path") {
  TempDir dir;
  const std::string path = dir.path() + "/checkpoint.json";
  absl::StatusOr<Checkpoint> empty = LoadCheckpoint(path);  // first start: no file yet
  REQUIRE(empty.ok());
  CHECK(empty->claims.empty());

  REQUIRE(SaveCheckpoint(path, Sample()).ok());
  const int old_fd = ::open(path.c_str(), O_RDONLY);  // a reader of the old version
  REQUIRE(old_fd >= 0);
  Checkpoint next = Sample();
  next.claims.erase(next.claims.begin());
  REQUIRE(SaveCheckpoint(path, next).ok());
  CHECK(*LoadCheckpoint(path) == next);
  // The old reader still sees the whole old file: the new one was renamed over it.
  std::string old_text(1 << 16, '\0');
  const ssize_t n = ::pread(old_fd, old_text.data(), old_text.size(), 0);
  ::close(old_fd);
  REQUIRE(n > 0);
  old_text.resize(static_cast<size_t>(n));
  CHECK(*ParseCheckpoint(old_text) == Sample());

  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.exists() ? 1 : 0;
  CHECK(files == 1);  // no temporary file left behind

  dir.Write(".checkpoint.json.tmp", "left over from a crash");
  REQUIRE(SaveCheckpoint(path, Sample()).ok());  // a stale temporary file does not matter
  CHECK(*LoadCheckpoint(path) == Sample());

  dir.Write("checkpoint.json", Text(Sample()).substr(0, 40));
  absl::StatusOr<Checkpoint> torn = LoadCheckpoint(path);
  REQUIRE_FALSE(torn.ok());
  CHECK(torn.status().code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(torn.status().message()), Catch::Contains(path));
}

TEST_CASE("saving into a missing directory is an error") {
  CHECK_FALSE(SaveCheckpoint("/nonexistent-neuron-dra/checkpoint.json", Sample()).ok());
}

}  // namespace
}  // namespace neuron::dra

namespace neuron::dra {
namespace {

TEST_CASE("the fuzz seeds still are what their names say") {
  const char* src = std::getenv("NEURON_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const std::string dir = std::string(src) + "/tests/fuzz/corpus/dra_checkpoint/";
  // valid.json was sealed by the hand-written SHA-256 that OpenSSL replaced: it pins the checksum.
  CHECK(LoadCheckpoint(dir + "valid.json")->claims.size() == 2);
  CHECK(LoadCheckpoint(dir + "empty.json")->claims.empty());
  CHECK(LoadCheckpoint(dir + "version2.json").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  for (const char* bad :
       {"bad-state.json", "bad-requests.json", "torn.json", "wrong-checksum.json"}) {
    INFO(bad);
    CHECK(LoadCheckpoint(dir + bad).status().code() == absl::StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace neuron::dra
