// File: tests/operator/scheduler_version_test.cc
// The second kube-scheduler follows the cluster: versions read from gitVersions and image tags,
// the default image at the API server's version (GET /version, asked once per refresh period,
// not per pass), and the SchedulerVersionSkew condition while spec.customSchedulerImage is
// newer than the API server.
#include <memory>
#include <string>

#include "lib/operator/kube_version.h"
#include "lib/operator/reconciler.h"
#include "lib/operator/status.h"
#include "tests/fakes/fake_clock.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

constexpr char kVersionSampleAlpha[] = "deploy/operator/samples/deviceconfig-v1alpha1.yaml";

std::string Text(const std::optional<KubeVersion>& v) { return v ? v->ToString() : "none"; }

TEST_CASE("versions from gitVersions and image tags", "[operator][version]") {
  CHECK(Text(ParseKubeVersion("v1.32.13")) == "v1.32.13");
  CHECK(Text(ParseKubeVersion("1.32.13")) == "v1.32.13");
  CHECK(Text(ParseKubeVersion("v1.32.3+k3s1")) == "v1.32.3");
  CHECK(Text(ParseKubeVersion("v1.32.3-eks-abc")) == "v1.32.3");
  CHECK(Text(ParseKubeVersion("v1.35.5-eks-1-35-10")) == "v1.35.5");
  CHECK(Text(ParseKubeVersion("v1.33.0-rc.1")) == "v1.33.0");
  for (const char* bad : {"", "v", "v1", "v1.32", "v1.32.", "v1.x.3", "latest", "v1.32.3a",
                          "v1.32.3.4", "v1..3", "v99999999999.1.1"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseKubeVersion(bad).has_value());
  }
  CHECK(Text(ImageTagVersion(
            "public.ecr.aws/eks-distro/kubernetes/kube-scheduler:v1.35.5-eks-1-35-10")) ==
        "v1.35.5");
  CHECK(Text(ImageTagVersion("registry.example:5000/kube-scheduler:v1.31.4@sha256:0123")) ==
        "v1.31.4");
  for (const char* none : {"", "kube-scheduler", "registry.example:5000/kube-scheduler",
                           "kube-scheduler:latest", "kube-scheduler@sha256:0123"}) {
    CAPTURE(none);
    CHECK_FALSE(ImageTagVersion(none).has_value());
  }
  CHECK(KubeSchedulerImage({1, 32, 13}) == "registry.k8s.io/kube-scheduler:v1.32.13");
  // The skew policy compares minors: a newer patch of the same minor is fine.
  CHECK(SchedulerNewerThanApiServer({1, 33, 0}, {1, 32, 13}));
  CHECK(SchedulerNewerThanApiServer({2, 0, 0}, {1, 40, 0}));
  CHECK_FALSE(SchedulerNewerThanApiServer({1, 32, 20}, {1, 32, 3}));
  CHECK_FALSE(SchedulerNewerThanApiServer({1, 31, 9}, {1, 32, 0}));
}

// A reconciler on a fake clock, so the refresh period can pass without waiting.
struct VersionFixture {
  VersionFixture() {
    settings.ns = kNs;
    reconciler = std::make_unique<Reconciler>(*cluster.client, settings, ListNodes(*cluster.client),
                                              nullptr, &clock);
  }
  absl::Status Pass() { return reconciler->Reconcile(kNs, "neuron").status(); }
  std::string SchedulerImage() {
    const json d = cluster.server.Get(std::string("/apis/apps/v1/namespaces/") + kNs +
                                      "/deployments/neuron-custom-scheduler");
    REQUIRE(!d.is_null());
    return d["spec"]["template"]["spec"]["containers"][0]["image"];
  }
  void SetCustomImage(const std::string& image) const {
    REQUIRE(cluster.client
                ->Patch(DeviceConfigRef(), kNs, "neuron", k8s::PatchType::kMerge,
                        {{"spec", {{"customSchedulerImage", image}}}})
                .ok());
  }
  size_t VersionRequests() const { return cluster.server.RequestCount("GET", "/version"); }

  fakes::FakeClock clock;
  Cluster cluster;
  OperatorSettings settings;
  std::unique_ptr<Reconciler> reconciler;
};

TEST_CASE("without customSchedulerImage the kube-scheduler is the API server's version",
          "[operator][version]") {
  VersionFixture f;
  f.cluster.server.SetVersion("v1.32.13");
  f.cluster.CreateSample(kSample);
  REQUIRE(f.Pass().ok());
  CHECK(f.SchedulerImage() == "registry.k8s.io/kube-scheduler:v1.32.13");
  CHECK(CondStatus(f.cluster.GetDc("neuron"), kSchedulerSkewCondition).empty());

  // Asked once per refresh period, not per pass: a control-plane upgrade shows after it.
  REQUIRE(f.Pass().ok());
  CHECK(f.VersionRequests() == 1);
  f.cluster.server.SetVersion("v1.33.2-eks-4d5e6f");
  REQUIRE(f.Pass().ok());
  CHECK(f.SchedulerImage() == "registry.k8s.io/kube-scheduler:v1.32.13");
  CHECK(f.VersionRequests() == 1);
  f.clock.Advance(Reconciler::kServerVersionMaxAge);
  REQUIRE(f.Pass().ok());
  CHECK(f.VersionRequests() == 2);
  CHECK(f.SchedulerImage() == "registry.k8s.io/kube-scheduler:v1.33.2");

  // /version failing later: the last answer stands.
  f.clock.Advance(Reconciler::kServerVersionMaxAge);
  f.cluster.server.InjectError("GET", "/version", 503);
  REQUIRE(f.Pass().ok());
  CHECK(f.VersionRequests() == 3);
  CHECK(f.SchedulerImage() == "registry.k8s.io/kube-scheduler:v1.33.2");
}

TEST_CASE("no answer from /version yet fails the pass; an unreadable one falls back",
          "[operator][version]") {
  VersionFixture f;
  f.cluster.CreateSample(kSample);
  f.cluster.server.InjectError("GET", "/version", 503);
  CHECK_FALSE(f.Pass().ok());            // retried with backoff, rather than a scheduler of a guess
  f.cluster.server.SetVersion("v1.32");  // no patch: not a version the image can carry
  REQUIRE(f.Pass().ok());
  CHECK(f.SchedulerImage() == f.settings.kube_scheduler_image);
}

TEST_CASE("a customSchedulerImage newer than the API server is a SchedulerVersionSkew condition",
          "[operator][version]") {
  VersionFixture f;
  f.cluster.server.SetVersion("v1.32.3-eks-abc");
  f.cluster.CreateSample(kVersionSampleAlpha);  // the seed's: kube-scheduler v1.35.5
  REQUIRE(f.Pass().ok());
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, kSchedulerSkewCondition) == "True");
  CHECK(CondReason(dc, kSchedulerSkewCondition) == "SchedulerNewerThanAPIServer");
  const std::string message = CondMessage(dc, kSchedulerSkewCondition);
  CHECK(message.find("v1.35.5") != std::string::npos);
  CHECK(message.find("v1.32.3") != std::string::npos);
  // The spec's image still runs: the condition says what to change, the operator does not.
  CHECK(f.SchedulerImage() ==
        "public.ecr.aws/eks-distro/kubernetes/kube-scheduler:v1.35.5-eks-1-35-10");

  // The same minor (even a newer patch) and an older one are within the policy: no condition.
  for (const char* ok :
       {"registry.k8s.io/kube-scheduler:v1.32.9", "registry.k8s.io/kube-scheduler:v1.31.4"}) {
    f.SetCustomImage(ok);
    REQUIRE(f.Pass().ok());
    dc = f.cluster.GetDc("neuron");
    CAPTURE(ok, dc["status"].dump());
    CHECK(CondStatus(dc, kSchedulerSkewCondition).empty());
    CHECK(f.SchedulerImage() == ok);
  }
  f.SetCustomImage("registry.k8s.io/kube-scheduler:v1.33.0");
  REQUIRE(f.Pass().ok());
  CHECK(CondStatus(f.cluster.GetDc("neuron"), kSchedulerSkewCondition) == "True");
}

}  // namespace
}  // namespace neuron::op
