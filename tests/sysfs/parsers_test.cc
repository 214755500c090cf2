#include "lib/sysfs/parsers.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"

namespace neuron::sysfs {
namespace {

bool InvalidWith(const absl::Status& s, const std::string& needle) {
  return absl::IsInvalidArgument(s) && std::string(s.message()).find(needle) != std::string::npos;
}

TEST_CASE("ParseU64 accepts driver counters", "[sysfs][parsers]") {
  CHECK(*ParseU64("0\n") == 0);
  CHECK(*ParseU64("42") == 42);
  CHECK(*ParseU64("18446744073709551615\n") == 18446744073709551615ULL);
}

TEST_CASE("ParseU64 rejects bad input with clear messages", "[sysfs][parsers]") {
  CHECK(InvalidWith(ParseU64("").status(), "empty"));
  CHECK(InvalidWith(ParseU64("\n").status(), "empty"));
  CHECK(InvalidWith(ParseU64("-1\n").status(), "negative"));
  CHECK(InvalidWith(ParseU64("12a\n").status(), "not a decimal"));
  CHECK(InvalidWith(ParseU64(" 12").status(), "not a decimal"));
  CHECK(InvalidWith(ParseU64("12\n\n").status(), "not a decimal"));
  CHECK(InvalidWith(ParseU64("0x10").status(), "not a decimal"));
  CHECK(InvalidWith(ParseU64("18446744073709551616").status(), "overflow"));
  CHECK(InvalidWith(ParseU64("99999999999999999999999").status(), "overflow"));
  // The message quotes the value, escaping control bytes.
  CHECK(std::string(ParseU64(std::string("1\0", 2)).status().message()).find("\\x00") !=
        std::string::npos);
}

TEST_CASE("ParseUnhealthyComponents: nothing listed, a list, garbage", "[sysfs][parsers]") {
  CHECK(*ParseUnhealthyComponents("") == "");
  CHECK(*ParseUnhealthyComponents("\n") == "");
  CHECK(*ParseUnhealthyComponents("0\n") == "");
  CHECK(*ParseUnhealthyComponents("None\n") == "");
  CHECK(*ParseUnhealthyComponents("hbm1\n") == "hbm1");
  CHECK(*ParseUnhealthyComponents("hbm1,sram\n") == "hbm1, sram");
  CHECK(*ParseUnhealthyComponents("hbm1\nnc 3\n") == "hbm1, nc, 3");
  CHECK(absl::IsInvalidArgument(ParseUnhealthyComponents("hbm\x01").status()));
  CHECK(absl::IsInvalidArgument(ParseUnhealthyComponents(std::string(65, 'a')).status()));
  CHECK(absl::IsInvalidArgument(ParseUnhealthyComponents(std::string(5000, ' ')).status()));
  // The longest accepted list (32 words of 64 bytes) re-reads as itself: what fuzzing found
  // was 128 one-letter words that fit a byte cap but whose ", "-joined form did not.
  std::string many;
  for (int i = 0; i < 32; ++i) absl::StrAppend(&many, std::string(64, 'a' + i % 26), " ");
  auto joined = ParseUnhealthyComponents(many);
  REQUIRE(joined.ok());
  CHECK(*ParseUnhealthyComponents(*joined) == *joined);
  CHECK(absl::IsInvalidArgument(ParseUnhealthyComponents(absl::StrCat(many, "x")).status()));
}

TEST_CASE("ParseCoreCount reads the newline-less driver value", "[sysfs][parsers]") {
  CHECK(*ParseCoreCount("2") == 2);
  CHECK(*ParseCoreCount("8\n") == 8);
  CHECK(InvalidWith(ParseCoreCount("").status(), "empty"));
  CHECK(InvalidWith(ParseCoreCount("0").status(), "out of range"));
  CHECK(InvalidWith(ParseCoreCount("2000").status(), "out of range"));
  CHECK(InvalidWith(ParseCoreCount("-2").status(), "negative"));
  CHECK(InvalidWith(ParseCoreCount("two").status(), "not a decimal"));
}

TEST_CASE("ParseConnectedDevices", "[sysfs][parsers]") {
  CHECK(ParseConnectedDevices("")->empty());
  CHECK(ParseConnectedDevices("\n")->empty());
  CHECK(*ParseConnectedDevices("3\n") == std::vector<int>{3});
  CHECK(*ParseConnectedDevices("1, 3, 12, 4\n") == std::vector<int>{1, 3, 12, 4});
  CHECK(*ParseConnectedDevices("1,3") == std::vector<int>{1, 3});
  CHECK(InvalidWith(ParseConnectedDevices("1, ").status(), "truncated"));
  CHECK(InvalidWith(ParseConnectedDevices("1, , 2\n").status(), "empty entry"));
  CHECK(InvalidWith(ParseConnectedDevices("1, x\n").status(), "not a decimal"));
  CHECK(InvalidWith(ParseConnectedDevices("1, -2\n").status(), "negative"));
  CHECK(InvalidWith(ParseConnectedDevices("1, 1\n").status(), "duplicate"));
  CHECK(InvalidWith(ParseConnectedDevices("5000\n").status(), "out of range"));
  CHECK(InvalidWith(ParseConnectedDevices("99999999999999999999\n").status(), "overflow"));
}

TEST_CASE("ParsePowerUtilization reads the driver's format", "[sysfs][parsers]") {
  auto p = ParsePowerUtilization("POWER_STATUS_VALID,1700000000,10.50,90.00,42.25\n");
  REQUIRE(p.ok());
  CHECK(p->valid);
  CHECK(p->status == "POWER_STATUS_VALID");
  CHECK(p->timestamp == 1700000000);
  CHECK(p->min == Approx(10.5));
  CHECK(p->max == Approx(90.0));
  CHECK(p->avg == Approx(42.25));

  auto none = ParsePowerUtilization("POWER_STATUS_NO_DATA,1700000000,100.00,0.00,0.00\n");
  REQUIRE(none.ok());
  CHECK_FALSE(none->valid);
  CHECK(ParsePowerUtilization("0,5,1,2,1.5")->valid);

  CHECK(InvalidWith(ParsePowerUtilization("").status(), "empty"));
  CHECK(InvalidWith(ParsePowerUtilization("POWER_STATUS_VALID,1,2").status(), "truncated"));
  CHECK(InvalidWith(ParsePowerUtilization("V,1,2,3,4,5").status(), "too many"));
  CHECK(InvalidWith(ParsePowerUtilization("V,-1,2,3,3").status(), "negative"));
  CHECK(InvalidWith(ParsePowerUtilization("V,1,2,3,x").status(), "not a decimal"));
  CHECK(InvalidWith(ParsePowerUtilization("V,1,2,3,").status(), "empty"));
  CHECK(InvalidWith(ParsePowerUtilization("V,1,2,300,4").status(), "above 100"));
  CHECK(InvalidWith(ParsePowerUtilization("V!,1,2,3,3").status(), "bad status"));
  CHECK(
      InvalidWith(ParsePowerUtilization("POWER_STATUS_VALID,1,50,40,45").status(), "inconsistent"));
  CHECK(InvalidWith(ParsePowerUtilization("V,1,1e3,3,3").status(), "not a decimal"));
}

TEST_CASE("ParseHexU32 and ParseNumaNode for PCI attributes", "[sysfs][parsers]") {
  CHECK(*ParseHexU32("0x1d0f\n") == 0x1d0f);
  CHECK(*ParseHexU32("0x088000\n") == 0x088000);
  CHECK(*ParseHexU32("0XFFFFFFFF") == 0xffffffffu);
  CHECK(InvalidWith(ParseHexU32("").status(), "empty"));
  CHECK(InvalidWith(ParseHexU32("1d0f").status(), "0x prefix"));
  CHECK(InvalidWith(ParseHexU32("0x").status(), "truncated"));
  CHECK(InvalidWith(ParseHexU32("0x1g").status(), "not a hexadecimal"));
  CHECK(InvalidWith(ParseHexU32("0x123456789").status(), "overflow"));

  CHECK(*ParseNumaNode("-1\n") == -1);
  CHECK(*ParseNumaNode("1\n") == 1);
  CHECK(InvalidWith(ParseNumaNode("-2\n").status(), "negative"));
  CHECK(InvalidWith(ParseNumaNode("\n").status(), "empty"));
  CHECK(InvalidWith(ParseNumaNode("5000").status(), "out of range"));
}

TEST_CASE("ParseToken for arch strings", "[sysfs][parsers]") {
  CHECK(*ParseToken("NCv2\n") == "NCv2");
  CHECK(*ParseToken("  Trn1 \n") == "Trn1");
  CHECK(InvalidWith(ParseToken("\n").status(), "empty"));
  CHECK(InvalidWith(ParseToken("two words").status(), "single printable word"));
  CHECK(InvalidWith(ParseToken(std::string("a\0b", 3)).status(), "single printable word"));
  CHECK(InvalidWith(ParseToken(std::string(300, 'a')).status(), "too long"));
}

}  // namespace
}  // namespace neuron::sysfs
