// File: tests/agent/pod_attribution_source_test.cc
// The keep-or-drop rules of the last PodResources answer, on a fake clock, and the List call on
// real unix sockets (the fake kubelet's server; a path nobody serves).
#include "lib/agent/pod_attribution_source.h"

#include <string>

#include "catch2/catch.hpp"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::agent {
namespace {

constexpr absl::Duration kInterval = absl::Seconds(5);

NodeLayout Inf2() {
  NodeLayout l;
  for (int i = 0; i < 6; ++i) l.devices.push_back({i, 2});
  l.lnc = 1;
  return l;
}

v1::ListPodResourcesResponse OnePod(const std::string& name, const std::string& device) {
  v1::ListPodResourcesResponse r;
  v1::PodResources* p = r.add_pod_resources();
  p->set_namespace_("ml");
  p->set_name(name);
  v1::ContainerResources* c = p->add_containers();
  c->set_name("main");
  v1::ContainerDevices* d = c->add_devices();
  d->set_resource_name("aws.amazon.com/neuron");
  d->add_device_ids(device);
  return r;
}

TEST_CASE("a failed List keeps the last answer one more interval, then drops it", "[agent]") {
  fakes::FakeClock clock;
  PodAttributionSource source({"/nonexistent", kInterval, absl::Seconds(1)}, clock);
  CHECK(source.Snapshot().cores.empty());  // nothing before the first answer
  CHECK_FALSE(source.Snapshot().up);

  source.Apply(OnePod("a", "1"), Inf2());
  AllocationSnapshot s = source.Snapshot();
  CHECK(s.up);
  REQUIRE(s.cores.size() == 2);
  CHECK(s.cores[0].pod == "a");

  clock.Advance(kInterval);
  source.Apply(absl::UnavailableError("kubelet restarting"), Inf2());
  s = source.Snapshot();
  CHECK_FALSE(s.up);
  CHECK(s.list_errors == 1);
  CHECK(s.cores.size() == 2);  // kept: one failed poll

  clock.Advance(kInterval);
  CHECK(source.Snapshot().cores.empty());  // two intervals old: not served even before a poll
  source.Apply(absl::UnavailableError("kubelet restarting"), Inf2());
  s = source.Snapshot();
  CHECK(s.cores.empty());
  CHECK(s.list_errors == 2);

  clock.Advance(kInterval);
  source.Apply(OnePod("b", "2"), Inf2());
  s = source.Snapshot();
  CHECK(s.up);
  REQUIRE(s.cores.size() == 2);
  CHECK(s.cores[0].pod == "b");
}

TEST_CASE("a List without the pod drops it at once", "[agent]") {
  fakes::FakeClock clock;
  PodAttributionSource source({"/nonexistent", kInterval, absl::Seconds(1)}, clock);
  source.Apply(OnePod("a", "1"), Inf2());
  clock.Advance(kInterval);
  source.Apply(v1::ListPodResourcesResponse(), Inf2());
  CHECK(source.Snapshot().cores.empty());
  CHECK(source.Snapshot().up);
}

TEST_CASE("ignored entries of the answer in use are counted", "[agent]") {
  fakes::FakeClock clock;
  PodAttributionSource source({"/nonexistent", kInterval, absl::Seconds(1)}, clock);
  source.Apply(OnePod("a", "77"), Inf2());
  CHECK(source.Snapshot().ignored_entries == 1);
  source.Apply(OnePod("a", "1"), Inf2());
  CHECK(source.Snapshot().ignored_entries == 0);
}

TEST_CASE("ListPodResources asks the kubelet over its unix socket, or says why not", "[agent]") {
  fakes::FakeKubelet kubelet;
  absl::StatusOr<v1::ListPodResourcesResponse> r =
      ListPodResources(kubelet.pod_resources_socket(), absl::Seconds(5));
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);  // not served yet
  CHECK(r.status().message().find(kubelet.pod_resources_socket()) != std::string::npos);

  REQUIRE(kubelet.StartPodResources().ok());
  kubelet.SetPodResources(OnePod("a", "1"));
  r = ListPodResources(kubelet.pod_resources_socket(), absl::Seconds(5));
  REQUIRE(r.ok());
  REQUIRE(r->pod_resources_size() == 1);
  CHECK(r->pod_resources(0).name() == "a");

  PodAttributionSource source({kubelet.pod_resources_socket(), kInterval, absl::Seconds(5)},
                              Clock::Real());
  source.Poll(Inf2());
  const AllocationSnapshot s = source.Snapshot();
  CHECK(s.up);
  CHECK(s.cores.size() == 2);
  CHECK(kubelet.pod_resources_list_calls() == 2);
}

}  // namespace
}  // namespace neuron::agent

namespace neuron::agent {
namespace {

TEST_CASE("the default PodResources socket follows --kubelet-dir; a given one is kept",
          "[agent][pod-attribution]") {
  CHECK(ResolvePodResourcesSocket(kPodResourcesSocketUnderKubeletDir, "/var/lib/kubelet") ==
        "/var/lib/kubelet/pod-resources/kubelet.sock");
  CHECK(ResolvePodResourcesSocket(kPodResourcesSocketUnderKubeletDir, "/var/lib/kubelet-1.34/") ==
        "/var/lib/kubelet-1.34/pod-resources/kubelet.sock");
  CHECK(ResolvePodResourcesSocket("/run/pr.sock", "/var/lib/kubelet-1.34") == "/run/pr.sock");
  CHECK(ResolvePodResourcesSocket("", "/var/lib/kubelet").empty());  // off stays off
}

}  // namespace
}  // namespace neuron::agent
