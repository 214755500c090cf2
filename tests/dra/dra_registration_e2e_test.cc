// File: tests/dra/dra_registration_e2e_test.cc
// The real binary in --api=dra mode (emulated node, fake apiserver through a kubeconfig) against
// the fake DRA kubelet: directories from the env names AWS's image uses, registration, a claim
// the API does not know failing alone, socket re-creation, and SIGTERM removing both sockets
// with exit code 0.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "lib/dra/unix_socket.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron::dra {
namespace {

using fakes::FakeDraKubelet;
using neuron::testing::BinaryPath;
using neuron::testing::Subprocess;

// <dir>/kubeconfig for the fake apiserver on loopback (plain HTTP).
std::string WriteKubeconfig(const std::string& dir, int port) {
  const std::string path = dir + "/kubeconfig";
  std::ofstream f(path);
  f << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: fake\n  cluster:\n"
    << "    server: http://127.0.0.1:" << port << "\nusers:\n- name: u\n  user:\n    token: t\n"
    << "contexts:\n- name: t\n  context:\n    cluster: fake\n    user: u\n";
  return path;
}

TEST_CASE("neuron-device-plugin --api=dra registers, answers and exits cleanly",
          "[dra][registration][e2e]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  fakes::FakeApiServer api;
  REQUIRE(api.Start().ok());
  // Inherited by the child: the directories come from the environment, as in AWS's image.
  ::setenv("KUBELET_REGISTRAR_DIRECTORY_PATH", kubelet.registrar_dir().c_str(), 1);
  ::setenv("KUBELET_PLUGINS_DIRECTORY_PATH", kubelet.plugins_dir().c_str(), 1);
  ::setenv("CDI_ROOT", (kubelet.dir() + "/cdi").c_str(), 1);
  Subprocess plugin({BinaryPath("neuron-device-plugin"), "--api=dra", "--emulate=trn1.2xlarge",
                     "--emulate-dir=" + kubelet.dir() + "/host", "--node-name=node-1",
                     "--kubeconfig=" + WriteKubeconfig(kubelet.dir(), api.port()),
                     "--dra-state-dir=" + kubelet.dir() + "/state", "--metrics-listen="},
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
  CHECK_FALSE(prepared->at("uid-1").error.empty());  // no such claim in the API

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
