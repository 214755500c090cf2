// ExtractLayer on well-formed layers: files, directories, links, modes, compression, and the
// OCI whiteout rules across two layers.
#include "lib/cache/layer_extractor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <filesystem>

#include "tests/cache/layer_test_util.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;
using testing::Compression;
using testing::Dir;
using testing::File;
using testing::Hardlink;
using testing::ReadFile;
using testing::ScratchDir;
using testing::Symlink;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

TEST_CASE("a plain layer extracts files, dirs, links and modes", "[layer]") {
  ScratchDir tmp;
  const std::string layer = tmp.Sub("layer.tar");
  const std::string dest = tmp.Sub("dest");
  fs::create_directory(dest);
  testing::WriteLayer(
      layer,
      {Dir("./", 0700), Dir("./bin/", 0700), File("./bin/tool", "#!/bin/sh\n", 04755),
       File("bin//data.bin", "payload", 0600), Symlink("lib/tool-link", "../bin/tool"),
       Hardlink("bin/tool-hard", "./bin/tool"), File("deep/a/b/c.txt", "implicit parents", 02644)});
  ExtractStats stats;
  REQUIRE(ExtractLayer(layer, dest, ExtractLimits{}, stats).ok());

  CHECK(ReadFile(dest + "/bin/tool") == "#!/bin/sh\n");
  CHECK(ModeOf(dest + "/bin/tool") == 0755);  // setuid stripped
  CHECK(ModeOf(dest + "/bin/data.bin") == 0600);
  CHECK(ModeOf(dest + "/deep/a/b/c.txt") == 0644);  // setgid stripped
  CHECK(ModeOf(dest + "/bin") == 0755);             // directories open to every reader
  CHECK(fs::read_symlink(dest + "/lib/tool-link") == "../bin/tool");
  CHECK(ReadFile(dest + "/lib/tool-link") == "#!/bin/sh\n");
  CHECK(InodeOf(dest + "/bin/tool-hard") == InodeOf(dest + "/bin/tool"));
  CHECK(stats.files == 3);
  CHECK(stats.dirs == 1);  // "./" is the root itself
  CHECK(stats.symlinks == 1);
  CHECK(stats.hardlinks == 1);
  CHECK(stats.bytes == 10 + 7 + 16);
  CHECK(stats.entries == 7);
}

TEST_CASE("gzip and zstd layers are detected", "[layer]") {
  ScratchDir tmp;
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    const std::string layer = tmp.Sub("layer.compressed");
    const std::string dest = tmp.Sub(c == Compression::kGzip ? "gz" : "zst");
    fs::create_directory(dest);
    testing::WriteLayer(layer, {File("a/b.txt", std::string(100000, 'x'))}, c);
    ExtractStats stats;
    REQUIRE(ExtractLayer(layer, dest, ExtractLimits{}, stats).ok());
    CHECK(ReadFile(dest + "/a/b.txt") == std::string(100000, 'x'));
  }
}

TEST_CASE("a second layer applies whiteouts and opaque directories", "[layer]") {
  ScratchDir tmp;
  const std::string dest = tmp.Sub("dest");
  fs::create_directory(dest);
  testing::WriteLayer(
      tmp.Sub("l1.tar"),
      {File("a/x", "old"), File("a/keep", "kept"), File("o/old1", "1"), File("o/sub/old2", "2"),
       File("t/inside", "dir becomes a file"), File("f", "file becomes a dir")});
  testing::WriteLayer(tmp.Sub("l2.tgz"),
                      {File("o/new", "before the marker"), File("a/.wh.x", ""),
                       File("o/.wh..wh..opq", ""), File("o/sub/new2", "after the marker"),
                       File("t", "now a file"), Dir("f"), File("f/inner", "now a dir")},
                      Compression::kGzip);
  ExtractStats stats;
  REQUIRE(ExtractLayer(tmp.Sub("l1.tar"), dest, ExtractLimits{}, stats).ok());
  const absl::Status second = ExtractLayer(tmp.Sub("l2.tgz"), dest, ExtractLimits{}, stats);
  INFO(second.ToString());
  REQUIRE(second.ok());

  CHECK_FALSE(fs::exists(dest + "/a/x"));
  CHECK_FALSE(fs::exists(dest + "/a/.wh.x"));
  CHECK(ReadFile(dest + "/a/keep") == "kept");
  CHECK_FALSE(fs::exists(dest + "/o/old1"));
  CHECK_FALSE(fs::exists(dest + "/o/sub/old2"));
  CHECK_FALSE(fs::exists(dest + "/o/.wh..wh..opq"));
  CHECK(ReadFile(dest + "/o/new") == "before the marker");
  CHECK(ReadFile(dest + "/o/sub/new2") == "after the marker");
  CHECK(ReadFile(dest + "/t") == "now a file");
  CHECK(ReadFile(dest + "/f/inner") == "now a dir");
  CHECK(stats.whiteouts == 2);
  CHECK(stats.entries == 13);
}

TEST_CASE("extraction leaves the process working directory alone", "[layer]") {
  ScratchDir tmp;
  fs::create_directory(tmp.Sub("dest"));
  testing::WriteLayer(tmp.Sub("l.tar"), {File("x", "y")});
  char before[PATH_MAX];
  REQUIRE(::getcwd(before, sizeof before) != nullptr);
  const mode_t umask_before = ::umask(022);
  ::umask(umask_before);
  ExtractStats stats;
  REQUIRE(ExtractLayer(tmp.Sub("l.tar"), tmp.Sub("dest"), ExtractLimits{}, stats).ok());
  char after[PATH_MAX];
  REQUIRE(::getcwd(after, sizeof after) != nullptr);
  CHECK(std::string(before) == after);
  CHECK(::umask(umask_before) == umask_before);
}

TEST_CASE("a cancelled extraction stops with Cancelled", "[layer]") {
  ScratchDir tmp;
  fs::create_directory(tmp.Sub("dest"));
  testing::WriteLayer(tmp.Sub("l.tar"), {File("x", "y")});
  ExtractStats stats;
  const absl::Status s =
      ExtractLayer(tmp.Sub("l.tar"), tmp.Sub("dest"), ExtractLimits{}, stats, [] { return true; });
  CHECK(s.code() == absl::StatusCode::kCancelled);
  CHECK_FALSE(fs::exists(tmp.Sub("dest/x")));
}

TEST_CASE("a missing layer file is NotFound", "[layer]") {
  ScratchDir tmp;
  ExtractStats stats;
  CHECK(ExtractLayer(tmp.Sub("nope.tar"), tmp.path(), ExtractLimits{}, stats).code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace neuron::cache
