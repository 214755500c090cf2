// ExtractLayer on hostile layers: each is rejected with InvalidArgument naming the entry and
// the reason, and nothing outside the destination changes (a sibling directory is compared
// before and after).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/cache/layer_extractor.h"
#include "tests/cache/layer_test_util.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;
using testing::Compression;
using testing::Dir;
using testing::File;
using testing::Hardlink;
using testing::ScratchDir;
using testing::Symlink;
using testing::TarEntry;

// <scratch>/sibling holds a file a hostile layer would like to change; <scratch>/dest is the
// extraction root.
class HostileFixture {
 public:
  HostileFixture() {
    testing::WriteFile(tmp_.Sub("sibling/victim"), "original");
    fs::create_directory(tmp_.Sub("dest"));
    before_ = Outside();
  }
  std::string Layer() const { return tmp_.Sub("layer.tar"); }
  std::string Dest() const { return tmp_.Sub("dest"); }
  absl::Status Extract(const ExtractLimits& limits = {}) {
    ExtractStats stats;
    return ExtractLayer(Layer(), Dest(), limits, stats);
  }
  // Everything but the destination (the layer file itself included).
  std::map<std::string, std::string> Outside() const {
    auto snap = testing::Snapshot(tmp_.path());
    for (auto it = snap.begin(); it != snap.end();) {
      it = absl::StartsWith(it->first, "dest") ? snap.erase(it) : std::next(it);
    }
    return snap;
  }
  void ExpectRejected(const absl::Status& s, const std::string& reason) {
    INFO(s.ToString());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(s.message(), reason));
    CHECK(absl::StrContains(s.message(), Layer()));
    auto after = Outside();
    after.erase("layer.tar");
    auto before = before_;
    before.erase("layer.tar");
    CHECK(after == before);
    CHECK(testing::ReadFile(tmp_.Sub("sibling/victim")) == "original");
  }

 private:
  ScratchDir tmp_;
  std::map<std::string, std::string> before_;
};

TEST_CASE("hostile entry names are rejected", "[layer][hostile]") {
  HostileFixture f;
  SECTION("parent escape") {
    testing::WriteLayer(f.Layer(), {File("ok", "fine"), File("../sibling/victim", "pwned")});
    f.ExpectRejected(f.Extract(), "entry \"../sibling/victim\": path contains \"..\"");
  }
  SECTION("absolute path") {
    testing::WriteLayer(f.Layer(), {File("/abs", "pwned")});
    f.ExpectRejected(f.Extract(), "entry \"/abs\": absolute path");
  }
  SECTION("hardlink out of the root") {
    testing::WriteLayer(f.Layer(), {Hardlink("h", "../sibling/victim")});
    f.ExpectRejected(f.Extract(), "entry \"h\": hardlink to an invalid path");
  }
}

TEST_CASE("symlinks that leave the root, or are written through, are rejected",
          "[layer][hostile]") {
  HostileFixture f;
  SECTION("absolute target") {
    testing::WriteLayer(f.Layer(), {Symlink("etc", "/etc")});
    f.ExpectRejected(f.Extract(), "entry \"etc\": symlink to absolute path \"/etc\"");
  }
  SECTION("relative target outside, then a file through it") {
    testing::WriteLayer(f.Layer(),
                        {Symlink("a/out", "../../sibling"), File("a/out/victim", "pwned")});
    f.ExpectRejected(f.Extract(),
                     "entry \"a/out\": symlink target \"../../sibling\" points "
                     "outside the image");
  }
  SECTION("target inside, then a file through it") {
    testing::WriteLayer(f.Layer(), {Dir("d"), Symlink("l", "d"), File("l/f", "through")});
    f.ExpectRejected(f.Extract(), "entry \"l/f\": would be written through the symlink \"l\"");
    CHECK_FALSE(fs::exists(f.Dest() + "/d/f"));
  }
  SECTION("chained symlinks stay inside") {
    // Each link passes the lexical check; followed one after the other by the kernel, "d/x"
    // would be d/y/.. = <root>/.. if its target were stored as written.
    testing::WriteLayer(f.Layer(), {Dir("d"), Symlink("d/y", ".."), Symlink("d/x", "y/..")});
    REQUIRE(f.Extract().ok());
    CHECK(fs::read_symlink(f.Dest() + "/d/x") == ".");
    const std::string resolved = fs::canonical(f.Dest() + "/d/x").string();
    CHECK(absl::StartsWith(resolved, fs::canonical(f.Dest()).string()));
  }
  SECTION("whiteout through a symlink") {
    testing::WriteLayer(f.Layer(),
                        {Dir("d"), File("d/keep", "k"), Symlink("l", "d"), File("l/.wh.keep", "")});
    f.ExpectRejected(f.Extract(), "would be written through the symlink \"l\"");
    CHECK(fs::exists(f.Dest() + "/d/keep"));
  }
}

TEST_CASE("devices, FIFOs and sockets are rejected", "[layer][hostile]") {
  HostileFixture f;
  SECTION("character device") {
    TarEntry dev{"null", TarEntry::Type::kCharDevice, "", "", 0666};
    testing::WriteLayer(f.Layer(), {dev});
    f.ExpectRejected(f.Extract(), "entry \"null\": character devices are not allowed");
  }
  SECTION("FIFO") {
    TarEntry fifo{"pipe", TarEntry::Type::kFifo, "", "", 0644};
    testing::WriteLayer(f.Layer(), {fifo});
    f.ExpectRejected(f.Extract(), "entry \"pipe\": FIFOs are not allowed");
  }
  CHECK(fs::is_empty(f.Dest()));
}

TEST_CASE("size and entry limits hold before data is written", "[layer][hostile]") {
  HostileFixture f;
  SECTION("a 10 GiB sparse file is rejected from its header") {
    ScratchDir work;
    REQUIRE(testing::Shell("cd " + work.path() + " && truncate -s 10G big && tar --sparse -czf " +
                           f.Layer() + " big && rm -f big") == 0);
    f.ExpectRejected(f.Extract(), "entry \"big\": file of 10737418240 bytes is over the limit");
    CHECK(fs::is_empty(f.Dest()));
  }
  SECTION("the image total is checked across files") {
    testing::WriteLayer(f.Layer(),
                        {File("a", std::string(600, 'a')), File("b", std::string(600, 'b'))});
    ExtractLimits limits;
    limits.max_total_bytes = 1000;
    f.ExpectRejected(f.Extract(limits), "entry \"b\": file of 600 bytes takes the image over");
    CHECK_FALSE(fs::exists(f.Dest() + "/b"));
  }
  SECTION("too many entries") {
    std::vector<TarEntry> many;
    for (int i = 0; i < 10; ++i) many.push_back(File("f" + std::to_string(i), "x"));
    testing::WriteLayer(f.Layer(), many);
    ExtractLimits limits;
    limits.max_entries = 5;
    f.ExpectRejected(f.Extract(limits), "more than 5 entries");
    CHECK_FALSE(fs::exists(f.Dest() + "/f5"));
  }
}

TEST_CASE("a corrupt gzip layer is rejected", "[layer][hostile]") {
  HostileFixture f;
  testing::WriteLayer(f.Layer(), {File("a", std::string(50000, 'a'))}, Compression::kGzip);
  std::string bytes = testing::ReadFile(f.Layer());
  REQUIRE(bytes.size() > 40);
  for (size_t i = 20; i < bytes.size() - 10; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  testing::WriteFile(f.Layer(), bytes);
  f.ExpectRejected(f.Extract(), "not a valid tar layer");
}

TEST_CASE("a file that is not an archive is rejected", "[layer][hostile]") {
  HostileFixture f;
  testing::WriteFile(f.Layer(), "this is not a tar archive, just some text\n");
  f.ExpectRejected(f.Extract(), "not a valid tar layer");
}

}  // namespace
}  // namespace neuron::cache
