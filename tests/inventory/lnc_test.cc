#include "lib/inventory/lnc.h"

#include "catch2/catch.hpp"
#include "lib/inventory/emulation.h"
#include "lib/inventory/inventory.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;

const auto kTrn2 = topology::ModelForPciDevice(0x7364);
const auto kTrn1 = topology::ModelForPciDevice(0x7164);
const auto kTrn3 = topology::ModelForPciDevice(0x7564);

bool Mentions(const absl::Status& s, const std::string& what) {
  return std::string(s.message()).find(what) != std::string::npos;
}

TEST_CASE("LNC resolution order: flag > env > file > default", "[inventory][lnc]") {
  TempDir dir;
  auto fs = sysfs::MakeRootedFs(dir.path());
  LncInputs in;
  SECTION("default per family") {
    CHECK(ResolveLnc(*fs, in, kTrn2)->value == 2);
    CHECK(ResolveLnc(*fs, in, kTrn3)->value == 2);
    CHECK(ResolveLnc(*fs, in, kTrn1)->value == 1);
    CHECK(ResolveLnc(*fs, in, topology::ModelForPciDevice(0x7264))->value == 1);  // inf2
    CHECK(ResolveLnc(*fs, in, topology::ModelForPciDevice(0x7064))->value == 1);  // inf1
    CHECK(ResolveLnc(*fs, in, std::nullopt)->value == 1);
    CHECK(ResolveLnc(*fs, in, kTrn2)->source == LncSource::kDefault);
  }
  SECTION("file beats default") {
    dir.Write("opt/aws/neuron/logical_nc_config", "NEURON_LOGICAL_NC_CONFIG=1");
    auto s = ResolveLnc(*fs, in, kTrn2);
    REQUIRE(s.ok());
    CHECK(s->value == 1);
    CHECK(s->source == LncSource::kFile);
    CHECK(s->origin == "/opt/aws/neuron/logical_nc_config");
  }
  SECTION("env beats file") {
    dir.Write("opt/aws/neuron/logical_nc_config", "NEURON_LOGICAL_NC_CONFIG=1");
    in.env = "2";
    auto s = ResolveLnc(*fs, in, kTrn2);
    REQUIRE(s.ok());
    CHECK(s->value == 2);
    CHECK(s->source == LncSource::kEnv);
  }
  SECTION("flag beats env and file, even garbage ones") {
    dir.Write("opt/aws/neuron/logical_nc_config", "garbage");
    in.env = "nonsense";
    in.flag = 1;
    auto s = ResolveLnc(*fs, in, kTrn2);
    REQUIRE(s.ok());
    CHECK(s->value == 1);
    CHECK(s->source == LncSource::kFlag);
  }
}

TEST_CASE("bad LNC values are errors naming their source", "[inventory][lnc]") {
  TempDir dir;
  auto fs = sysfs::MakeRootedFs(dir.path());
  LncInputs in;
  SECTION("flag out of range or 2 on a chip without LNC") {
    CHECK(Mentions(ValidateLncFlag(3), "--lnc"));
    CHECK(Mentions(ValidateLncFlag(-1), "--lnc"));
    CHECK(ValidateLncFlag(0).ok());
    CHECK(ValidateLncFlag(2).ok());
    in.flag = 2;
    auto s = ResolveLnc(*fs, in, kTrn1);
    CHECK(absl::IsInvalidArgument(s.status()));
    CHECK(Mentions(s.status(), "--lnc"));
    CHECK(Mentions(s.status(), "trainium"));
  }
  SECTION("env garbage, out of range, or 2 on trn1") {
    for (const char* v : {"two", "", "3", "0"}) {
      in.env = v;
      auto s = ResolveLnc(*fs, in, kTrn2);
      CAPTURE(v);
      CHECK(absl::IsInvalidArgument(s.status()));
      CHECK(Mentions(s.status(), "NEURON_LOGICAL_NC_CONFIG"));
    }
    in.env = "2";
    CHECK(Mentions(ResolveLnc(*fs, in, kTrn1).status(), "NEURON_LOGICAL_NC_CONFIG"));
  }
  SECTION("file garbage or unsupported value") {
    for (const char* v : {"garbage\n", "NEURON_LOGICAL_NC_CONFIG=4\n", ""}) {
      dir.Write("opt/aws/neuron/logical_nc_config", v);
      auto s = ResolveLnc(*fs, in, kTrn2);
      CAPTURE(v);
      CHECK(absl::IsInvalidArgument(s.status()));
      CHECK(Mentions(s.status(), "/opt/aws/neuron/logical_nc_config"));
    }
    dir.Write("opt/aws/neuron/logical_nc_config", "NEURON_LOGICAL_NC_CONFIG=2\n");
    CHECK(Mentions(ResolveLnc(*fs, in, kTrn1).status(), "/opt/aws/neuron/logical_nc_config"));
  }
}

TEST_CASE("trn2.48xlarge has 64 logical cores at LNC 2 and 128 at LNC 1", "[inventory][lnc]") {
  for (int lnc : {1, 2}) {
    DYNAMIC_SECTION("LNC " << lnc) {
      TempDir dir;
      // The emulator writes the host file; the scanner resolves it like on a real node.
      REQUIRE(PrepareEmulation("trn2.48xlarge", dir.path(), lnc).ok());
      auto inv = ReadInventory(*sysfs::MakeRootedFs(dir.path()));
      REQUIRE(inv.ok());
      CHECK(inv->lnc == lnc);
      CHECK(inv->lnc_source == "file");
      CHECK(inv->total_physical_cores == 128);
      CHECK(inv->total_cores == 128 / lnc);
      CHECK(inv->devices[3].core_count == 8 / lnc);
      CHECK(inv->devices[3].cores.size() == 8);  // physical neuron_coreM dirs either way
    }
  }
}

TEST_CASE("an unreadable LNC withholds logical counts until it is fixed", "[inventory][lnc]") {
  TempDir dir;
  REQUIRE(PrepareEmulation("trn2.48xlarge", dir.path()).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  Scanner scanner(*fs);
  dir.Write("opt/aws/neuron/logical_nc_config", "LNC=two\n");
  auto inv = scanner.Scan();
  REQUIRE(inv.ok());
  CHECK(inv->lnc == 0);
  CHECK(inv->total_cores == 0);
  CHECK(inv->total_physical_cores == 128);
  CHECK(inv->devices[0].core_count == 0);
  CHECK(inv->lnc_error.find("/opt/aws/neuron/logical_nc_config") != std::string::npos);
  dir.Write("opt/aws/neuron/logical_nc_config", "NEURON_LOGICAL_NC_CONFIG=1\n");
  inv = scanner.Scan();
  REQUIRE(inv.ok());
  CHECK(inv->lnc == 1);
  CHECK(inv->total_cores == 128);
  CHECK(inv->lnc_error.empty());
}

}  // namespace
}  // namespace neuron::inventory
