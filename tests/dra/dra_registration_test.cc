// File: tests/dra/dra_registration_test.cc
// The registration handshake with a fake kubelet on real unix sockets: GetInfo contents, the
// kubelet's choice of API version, refusals surfacing in the plugin, socket re-creation, and
// graceful shutdown.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lib/dra/dra_service.h"
#include "lib/dra/kubelet_plugin.h"
#include "lib/dra/registration_server.h"
#include "lib/dra/unix_socket.h"
#include "tests/dra/grpc_test_util.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

namespace neuron::dra {
namespace {

using fakes::DraClaim;
using fakes::DraKubeletVersion;
using fakes::FakeDraKubelet;
using testing::Eventually;
using testing::OptionsFor;
using testing::RunningPlugin;
using testing::ScriptedPreparer;

constexpr char kRegistrationDriver[] = "neuron.aws.com";

// Leaves a socket file behind with nobody listening, as a killed process does.
void MakeStaleSocket(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
  REQUIRE(IsSocket(path));
}

TEST_CASE("a 1.34 kubelet registers the plugin and chooses v1", "[dra][registration]") {
  FakeDraKubelet kubelet(DraKubeletVersion::k1_34);
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  RunningPlugin running(opts, preparer);

  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  auto reg = kubelet.registration(kRegistrationDriver);
  REQUIRE(reg.has_value());
  CHECK(reg->socket_path == kubelet.registrar_dir() + "/neuron.aws.com-reg.sock");
  CHECK(reg->type == "DRAPlugin");
  CHECK(reg->name == "neuron.aws.com");
  CHECK(reg->endpoint == kubelet.plugins_dir() + "/neuron.aws.com/dra.sock");
  CHECK(reg->supported_versions == std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin"});
  CHECK(reg->chosen_service == "v1.DRAPlugin");
  CHECK(kubelet.registration_errors().empty());
  CHECK(Eventually([&] { return running.plugin().registration_status().ok(); }));

  auto prepared =
      kubelet.NodePrepareResources(kRegistrationDriver, {{"default", "claim-a", "uid-a"}});
  REQUIRE(prepared.ok());
  CHECK(prepared->at("uid-a").error.empty());
  REQUIRE(preparer.prepare_calls().size() == 1);
}

TEST_CASE("a 1.33 kubelet chooses v1beta1 from the same plugin", "[dra][registration]") {
  FakeDraKubelet kubelet(DraKubeletVersion::k1_33);
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  RunningPlugin running(OptionsFor(kubelet), preparer);

  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  CHECK(kubelet.registration(kRegistrationDriver)->chosen_service == "v1beta1.DRAPlugin");
  auto prepared = kubelet.NodePrepareResources(kRegistrationDriver, {{"ns", "c", "uid-1"}});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at("uid-1").devices.size() == 1);
  CHECK(prepared->at("uid-1").devices[0].device == "neurondevice0");
}

TEST_CASE("the endpoint in GetInfo is the DRA socket as the host sees it", "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  KubeletPluginOptions opts = OptionsFor(kubelet);
  opts.host_plugins_dir = "/var/lib/kubelet/plugins";
  CHECK(DraSocketPath(opts) == kubelet.plugins_dir() + "/neuron.aws.com/dra.sock");
  CHECK(DraEndpointOnHost(opts) == "/var/lib/kubelet/plugins/neuron.aws.com/dra.sock");
  RunningPlugin running(opts, preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  CHECK(kubelet.registration(kRegistrationDriver)->endpoint ==
        "/var/lib/kubelet/plugins/neuron.aws.com/dra.sock");
}

TEST_CASE("a kubelet refusal reaches the plugin as an error", "[dra][registration]") {
  FakeDraKubelet kubelet(DraKubeletVersion::k1_33);
  REQUIRE(kubelet.Start().ok());
  // Only v1 offered: a 1.33 kubelet speaks v1beta1 only and must refuse.
  RegistrationServer reg(
      PluginInfo{"DRAPlugin", kRegistrationDriver, "/nonexistent/dra.sock", {"v1.DRAPlugin"}},
      kubelet.registrar_dir() + "/neuron.aws.com-reg.sock");
  CHECK(reg.status().code() == absl::StatusCode::kUnavailable);  // nothing reported yet
  REQUIRE(reg.Start().ok());

  REQUIRE(kubelet.WaitForRegistrationErrors(1, absl::Seconds(10)));
  REQUIRE(Eventually([&] { return reg.notifications() >= 1; }));
  const absl::Status status = reg.status();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("none of services supported by the plugin") &&
                 Catch::Contains("v1beta1.DRAPlugin"));
  CHECK(kubelet.registration_errors()[0] == std::string(status.message()));
  CHECK_FALSE(kubelet.registration(kRegistrationDriver).has_value());
}

TEST_CASE("a plugin of another type is refused", "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  RegistrationServer reg(PluginInfo{"CSIPlugin", kRegistrationDriver, "", {"v1.DRAPlugin"}},
                         kubelet.registrar_dir() + "/x-reg.sock");
  REQUIRE(reg.Start().ok());
  REQUIRE(Eventually([&] { return reg.notifications() >= 1; }));
  CHECK_THAT(std::string(reg.status().message()),
             Catch::Contains("no handler registered for plugin type: CSIPlugin"));
}

TEST_CASE("a deleted registration socket is re-created and the kubelet registers again",
          "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  RunningPlugin running(opts, preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));

  REQUIRE(kubelet.DeleteRegistrationSockets() == 1);
  // Deleting the socket deregisters; the plugin notices (inotify) and serves it again.
  REQUIRE(kubelet.WaitForRegistrations(2, absl::Seconds(5)));
  CHECK(IsSocket(RegistrationSocketPath(opts)));
  CHECK(running.plugin().restores() >= 1);
  CHECK(kubelet.registration_errors().empty());
  auto prepared = kubelet.NodePrepareResources(kRegistrationDriver, {{"ns", "c", "uid-2"}});
  REQUIRE(prepared.ok());
  CHECK(prepared->at("uid-2").error.empty());
}

TEST_CASE("a deleted registrar directory is re-created with the socket", "[dra][registration]") {
  FakeDraKubelet kubelet;
  ScriptedPreparer preparer;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  RunningPlugin running(opts, preparer);
  REQUIRE(Eventually([&] { return IsSocket(RegistrationSocketPath(opts)); }));

  // Renamed away first: the plugin may re-create its socket while remove_all still runs.
  std::filesystem::rename(kubelet.registrar_dir(), kubelet.dir() + "/gone");
  std::filesystem::remove_all(kubelet.dir() + "/gone");
  // The watch went with the old directory: the check (event or periodic) restores it.
  CHECK(Eventually([&] { return IsSocket(RegistrationSocketPath(opts)); }, absl::Seconds(5)));
  REQUIRE(kubelet.Start().ok());  // a kubelet starting now finds and registers it
  CHECK(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
}

TEST_CASE("a deleted DRA socket is served again and the plugin re-registers",
          "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  RunningPlugin running(opts, preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));

  REQUIRE(::unlink(DraSocketPath(opts).c_str()) == 0);
  REQUIRE(kubelet.WaitForRegistrations(2, absl::Seconds(5)));
  CHECK(IsSocket(DraSocketPath(opts)));
  auto prepared = kubelet.NodePrepareResources(kRegistrationDriver, {{"ns", "c", "uid-3"}});
  REQUIRE(prepared.ok());
  CHECK(prepared->at("uid-3").error.empty());
}

TEST_CASE("a restarted kubelet registers the socket it finds", "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  RunningPlugin running(OptionsFor(kubelet), preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  REQUIRE(kubelet.Restart().ok());
  REQUIRE(kubelet.WaitForRegistrations(2, absl::Seconds(10)));
  CHECK(kubelet.registration_errors().empty());
  CHECK(running.plugin().restores() == 0);  // nothing was deleted
}

TEST_CASE("stale sockets from a previous run are replaced", "[dra][registration]") {
  FakeDraKubelet kubelet;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  MakeStaleSocket(DraSocketPath(opts));
  MakeStaleSocket(RegistrationSocketPath(opts));
  REQUIRE(kubelet.Start().ok());  // fails to register the dead socket and keeps retrying
  ScriptedPreparer preparer;
  RunningPlugin running(opts, preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  auto prepared = kubelet.NodePrepareResources(kRegistrationDriver, {{"ns", "c", "uid-4"}});
  REQUIRE(prepared.ok());
}

TEST_CASE("something other than a socket in the way is not deleted", "[dra][registration]") {
  FakeDraKubelet kubelet;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  std::filesystem::create_directories(std::filesystem::path(DraSocketPath(opts)).parent_path());
  std::ofstream(DraSocketPath(opts)) << "not a socket";
  ScriptedPreparer preparer;
  KubeletPlugin plugin(opts, preparer);
  absl::Notification stop;
  const absl::Status s = plugin.Run(stop);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(s.message()), Catch::Contains("not a socket"));
  CHECK(std::filesystem::is_regular_file(DraSocketPath(opts)));
  CHECK_FALSE(IsSocket(RegistrationSocketPath(opts)));
}

TEST_CASE("a socket path beyond sun_path is refused, not truncated", "[dra][registration]") {
  FakeDraKubelet kubelet;
  KubeletPluginOptions opts = OptionsFor(kubelet);
  opts.registrar_dir = kubelet.dir() + "/" + std::string(100, 'r');
  ScriptedPreparer preparer;
  KubeletPlugin plugin(opts, preparer);
  absl::Notification stop;
  CHECK(plugin.Run(stop).code() == absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(IsSocket(DraSocketPath(opts)));  // served first, removed again
}

TEST_CASE("stopping removes both sockets and the kubelet deregisters", "[dra][registration]") {
  FakeDraKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  ScriptedPreparer preparer;
  const KubeletPluginOptions opts = OptionsFor(kubelet);
  RunningPlugin running(opts, preparer);
  REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));

  CHECK(running.Stop().ok());
  CHECK_FALSE(IsSocket(RegistrationSocketPath(opts)));
  CHECK_FALSE(IsSocket(DraSocketPath(opts)));
  CHECK(kubelet.WaitForDeregistration(kRegistrationDriver, absl::Seconds(5)));
  CHECK_FALSE(kubelet.NodePrepareResources(kRegistrationDriver, {{"ns", "c", "uid"}}).ok());
}

}  // namespace
}  // namespace neuron::dra
