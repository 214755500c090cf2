// File: tests/dra/dra_registration_e2e_test.cc
// The real binary in --api=dra mode against the fake DRA kubelet: directories from the env
// names AWS's image uses, registration, the stand-in preparer's per-claim error, socket
// re-creation, and SIGTERM removing both sockets with exit code 0.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "lib/dra/unix_socket.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron::dra {
namespace {

using fakes::FakeDraKubelet;
using neuron::testing::BinaryPath;
using neuron::testing::Subprocess;

TEST_CASE("neuron-device-plugin --api=dra registers, answers and exits cleanly",
          "[dra][registration][e2e]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  // Inherited by the child: the directories come from the environment, as in AWS's image.
  ::setenv("KUBELET_REGISTRAR_DIRECTORY_PATH", kubelet.registrar_dir().c_str(), 1);
  ::setenv("KUBELET_PLUGINS_DIRECTORY_PATH", kubelet.plugins_dir().c_str(), 1);
  ::setenv("CDI_ROOT", (kubelet.dir() + "/cdi").c_str(), 1);
  Subprocess plugin({BinaryPath("neuron-device-plugin"), "--api=dra"},
                    kubelet.dir() + "/plugin.log");
  ::unsetenv("KUBELET_REGISTRAR_DIRECTORY_PATH");
  ::unsetenv("KUBELET_PLUGINS_DIRECTORY_PATH");
  ::unsetenv("CDI_ROOT");
  REQUIRE(plugin.started());

  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(20)));
  const auto reg = kubelet.registration("neuron.aws.com");
  REQUIRE(reg.has_value());
  CHECK(reg->endpoint == kubelet.plugins_dir() + "/neuron.aws.com/dra.sock");
  CHECK(reg->chosen_service == "v1.DRAPlugin");

  auto prepared = kubelet.NodePrepareResources("neuron.aws.com", {{"ns", "claim", "uid-1"}});
  REQUIRE(prepared.ok());
  CHECK_THAT(prepared->at("uid-1").error, Catch::Contains("not implemented"));

  REQUIRE(kubelet.DeleteRegistrationSockets() == 1);
  CHECK(kubelet.WaitForRegistrations(2, absl::Seconds(10)));

  CHECK(plugin.Terminate() == 0);
  CHECK_FALSE(IsSocket(kubelet.registrar_dir() + "/neuron.aws.com-reg.sock"));
  CHECK_FALSE(IsSocket(kubelet.plugins_dir() + "/neuron.aws.com/dra.sock"));
  CHECK(kubelet.WaitForDeregistration("neuron.aws.com", absl::Seconds(5)));
  CHECK_THAT(plugin.Log(), Catch::Contains("cdi_root=" + kubelet.dir() + "/cdi"));
}

}  // namespace
}  // namespace neuron::dra
