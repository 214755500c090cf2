#include "lib/ultraserver/identity.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "catch2/catch.hpp"
#include "lib/ultraserver/emulation.h"
#include "lib/ultraserver/read_identity.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::ultraserver {
namespace {

using sysfs::testing::TempDir;

// Writes `files` into the class directory under `root`.
void WriteClass(const std::string& root, const std::map<std::string, std::string>& files) {
  const auto dir = std::filesystem::path(root) / kClassDir;
  std::filesystem::create_directories(dir);
  for (const auto& [name, body] : files) std::ofstream(dir / name) << body;
}

TEST_CASE("trn2u class attributes read as the driver prints them", "[ultraserver]") {
  TempDir dir;
  WriteClass(dir.path(), {{"ultraserver_mode", "1,2,4\n"},
                          {"server_id_4", "bog79p1y8tetj5uu\n"},
                          {"node_id_4", "3\n"},
                          {"server_id_2", "ygml2651y0lwdd46\n"},
                          {"node_id_2", "1\n"}});
  auto fs = sysfs::MakeRootedFs(dir.path());
  auto id = ReadIdentity(*fs);
  REQUIRE(id.ok());
  REQUIRE(id->has_value());
  const Identity& i = **id;
  CHECK(i.modes == std::vector<int>{1, 2, 4});
  CHECK_FALSE(i.trn3);
  auto four = i.MemberOf(4);
  REQUIRE(four);
  CHECK(four->server_id == "bog79p1y8tetj5uu");
  CHECK(four->node_id == 3);
  CHECK(four->mode == Mode::kX4);
  auto two = i.MemberOf(2);
  REQUIRE(two);
  CHECK(two->server_id == "ygml2651y0lwdd46");
  CHECK(two->node_id == 1);
  CHECK(two->mode == Mode::kX2H);  // the driver pairs by X2H when the node supports it
  auto one = i.MemberOf(1);
  REQUIRE(one);
  CHECK(one->mode == Mode::kX1);
  CHECK(one->server_id == kNoServerId);
  CHECK(i.SetSizes() == std::vector<int>{1, 2, 4});
}

TEST_CASE("a node supporting only X2V pairs in X2V; unsupported sizes have no member",
          "[ultraserver]") {
  Identity i;
  i.modes = {3};
  i.server_id_2 = "aa";
  i.node_id_2 = 0;
  i.server_id_4 = "bb";
  i.node_id_4 = 0;
  CHECK(i.ModeForSize(2) == Mode::kX2V);
  CHECK_FALSE(i.MemberOf(4));
  CHECK_FALSE(i.MemberOf(1));
  CHECK(i.SetSizes() == std::vector<int>{2});
}

TEST_CASE("trn3 reads reservation_id and node_id", "[ultraserver]") {
  TempDir dir;
  WriteClass(dir.path(),
             {{"ultraserver_mode", "1,4\n"}, {"reservation_id", "cr-0abc\n"}, {"node_id", "2\n"}});
  auto fs = sysfs::MakeRootedFs(dir.path());
  auto id = ReadIdentity(*fs);
  REQUIRE(id.ok());
  REQUIRE(id->has_value());
  CHECK((*id)->trn3);
  auto four = (*id)->MemberOf(4);
  REQUIRE(four);
  CHECK(four->server_id == "cr-0abc");
  CHECK(four->node_id == 2);
}

TEST_CASE("no UltraServer: old driver, empty mode list, zero ids", "[ultraserver]") {
  TempDir old_driver;
  std::filesystem::create_directories(std::filesystem::path(old_driver.path()) / kClassDir);
  auto fs = sysfs::MakeRootedFs(old_driver.path());
  auto id = ReadIdentity(*fs);
  REQUIRE(id.ok());
  CHECK_FALSE(id->has_value());

  TempDir standalone;  // a trn2 outside any UltraServer: the driver prints "\n" and zeros
  WriteClass(
      standalone.path(),
      {{"ultraserver_mode", "\n"}, {"server_id_4", "0000000000000000\n"}, {"node_id_4", "-1\n"}});
  fs = sysfs::MakeRootedFs(standalone.path());
  id = ReadIdentity(*fs);
  REQUIRE(id.ok());
  CHECK_FALSE(id->has_value());

  TempDir no_ids;  // modes but zero ids: sizes 2 and 4 are not offered, X1 is
  WriteClass(no_ids.path(), {{"ultraserver_mode", "1,2,4\n"},
                             {"server_id_4", "0000000000000000\n"},
                             {"node_id_4", "-1\n"}});
  fs = sysfs::MakeRootedFs(no_ids.path());
  id = ReadIdentity(*fs);
  REQUIRE(id.ok());
  REQUIRE(id->has_value());
  CHECK((*id)->SetSizes() == std::vector<int>{1});
}

TEST_CASE("busy is Unavailable and garbage names its file", "[ultraserver]") {
  TempDir busy;
  WriteClass(busy.path(), {{"ultraserver_mode", "busy\n"}});
  auto fs = sysfs::MakeRootedFs(busy.path());
  CHECK(absl::IsUnavailable(ReadIdentity(*fs).status()));

  TempDir busy_id;
  WriteClass(busy_id.path(), {{"ultraserver_mode", "1,2,4\n"}, {"node_id_4", "busy\n"}});
  fs = sysfs::MakeRootedFs(busy_id.path());
  CHECK(absl::IsUnavailable(ReadIdentity(*fs).status()));

  TempDir garbage;
  WriteClass(garbage.path(), {{"ultraserver_mode", "1,2,4\n"}, {"server_id_4", "a b\x01\n"}});
  fs = sysfs::MakeRootedFs(garbage.path());
  auto s = ReadIdentity(*fs).status();
  CHECK(absl::IsInvalidArgument(s));
  CHECK(s.message().find("server_id_4") != std::string::npos);
}

TEST_CASE("parsers refuse what the driver never prints", "[ultraserver]") {
  CHECK(*ParseModes("1,2,3,4\n") == std::vector<int>{1, 2, 3, 4});
  CHECK(*ParseModes("4, 1\n") == std::vector<int>{1, 4});
  CHECK(ParseModes("")->empty());
  CHECK_FALSE(ParseModes("0").ok());
  CHECK_FALSE(ParseModes("5").ok());
  CHECK_FALSE(ParseModes("1,,2").ok());
  CHECK_FALSE(ParseModes("x").ok());
  CHECK(*ParseNodeId("-1\n") == -1);
  CHECK(*ParseNodeId("3") == 3);
  CHECK_FALSE(ParseNodeId("").ok());
  CHECK_FALSE(ParseNodeId("-2").ok());
  CHECK_FALSE(ParseNodeId("4x").ok());
  CHECK(ParseServerId("0000000000000000\n")->empty());
  CHECK_FALSE(ParseServerId(std::string(64, 'a')).ok());
  CHECK_FALSE(ParseServerId("").ok());
}

TEST_CASE("four emulated nodes of one name form one UltraServer of two pairs", "[ultraserver]") {
  std::vector<Identity> ids;
  for (int n = 0; n < 4; ++n) {
    TempDir dir;
    auto node = ParseEmulatedNode("us-a:" + std::to_string(n));
    REQUIRE(node.ok());
    WriteClass(dir.path(), EmulatedClassAttributes(*node));
    auto fs = sysfs::MakeRootedFs(dir.path());
    auto id = ReadIdentity(*fs);
    REQUIRE(id.ok());
    REQUIRE(id->has_value());
    ids.push_back(**id);
  }
  for (const Identity& i : ids) CHECK(i.server_id_4 == ids[0].server_id_4);
  CHECK(ids[0].server_id_2 == ids[1].server_id_2);
  CHECK(ids[2].server_id_2 == ids[3].server_id_2);
  CHECK(ids[0].server_id_2 != ids[2].server_id_2);
  CHECK(ids[3].node_id_4 == 3);
  CHECK(ids[3].node_id_2 == 1);

  auto other = ParseEmulatedNode("us-b:0:1,2,3,4");
  REQUIRE(other.ok());
  CHECK(other->modes == std::vector<int>{1, 2, 3, 4});
  CHECK(EmulatedClassAttributes(*other).at("server_id_4") !=
        EmulatedClassAttributes(*ParseEmulatedNode("us-a:0")).at("server_id_4"));
  CHECK_FALSE(ParseEmulatedNode("us-a").ok());
  CHECK_FALSE(ParseEmulatedNode("us-a:4").ok());
  CHECK_FALSE(ParseEmulatedNode("us a:0").ok());
  CHECK_FALSE(ParseEmulatedNode("us-a:0:").ok());
}

}  // namespace
}  // namespace neuron::ultraserver
