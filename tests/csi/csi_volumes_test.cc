// File: tests/csi/csi_volumes_test.cc
// The pieces under the CSI driver on real files: request validation, the volume records a
// restarted driver relies on, the copy mounter and the mount-table lookup.
#include <catch2/catch.hpp>

#include "lib/csi/mounter.h"
#include "lib/csi/publish_request.h"
#include "lib/csi/volume_records.h"
#include "tests/csi/csi_test_env.h"

namespace neuron::csi {
namespace {

using testing::ReadFile;
using testing::TempTree;
using testing::WriteFile;
namespace fs = std::filesystem;

PublishRequest Inline(const std::string& target) {
  PublishRequest r;
  r.volume_id = "csi-" + std::string(64, 'f');  // the kubelet's inline handle shape
  r.target_path = target;
  r.has_mount = true;
  r.context = {{kEphemeralKey, "true"}, {kPodNamespaceKey, "team"}, {kPodNameKey, "train-0"}};
  return r;
}

TEST_CASE("publish requests: what an inline volume from the kubelet looks like passes", "[csi]") {
  const std::string target =
      "/var/lib/kubelet/pods/6b1c/volumes/kubernetes.io~csi/neuron-cache/mount";
  PublishRequest r = Inline(target);
  CHECK(ValidatePublish(r, "/var/lib/kubelet").ok());
  CHECK(ValidatePublish(r, "/var/lib/kubelet/").ok());
  CHECK(PodOf(r.context) == "team/train-0");
  CHECK(PodOf({}) == "-");

  r.readonly = true;
  CHECK(absl::IsInvalidArgument(ValidatePublish(r, "/var/lib/kubelet")));
  r = Inline(target);
  r.has_mount = false;
  CHECK(absl::IsInvalidArgument(ValidatePublish(r, "/var/lib/kubelet")));
  for (const std::string bad :
       {"/var/lib/kubelet/pods/", "/var/lib/kubelet/pods/a/../../x", "/var/lib/kubelet/pods//a",
        "/var/lib/kubelet/pods/a/", "/var/lib/kubelet/podsx/a", "/var/lib/kubelet/pods/./a"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ValidateTargetPath(bad, "/var/lib/kubelet")));
  }
  CHECK(ValidateVolumeId("vol_1.a-b").ok());
  CHECK(absl::IsInvalidArgument(ValidateVolumeId("vol 1")));
}

TEST_CASE("volume records round-trip and survive a new reader; corrupt ones are named", "[csi]") {
  TempTree tmp;
  VolumeRecords records(tmp.path() + "/state");
  REQUIRE(records.Init().ok());
  CHECK(absl::IsNotFound(records.Read("csi-a").status()));
  REQUIRE(records.Write({"csi-a", "/k/pods/u/mount", "/caches/x", "team/p", "overlay"}).ok());
  REQUIRE(records.CreateVolumeDirs("csi-a").ok());
  CHECK(fs::is_directory(records.UpperDir("csi-a")));
  CHECK(fs::is_directory(records.WorkDir("csi-a")));

  VolumeRecords again(tmp.path() + "/state");
  absl::StatusOr<VolumeRecord> r = again.Read("csi-a");
  REQUIRE(r.ok());
  CHECK(r->target_path == "/k/pods/u/mount");
  CHECK(r->lower_dir == "/caches/x");
  CHECK(r->mounter == "overlay");

  WriteFile(again.RecordPath("csi-b"), "{not json");
  CHECK(absl::IsDataLoss(again.Read("csi-b").status()));
  REQUIRE(again.List().size() == 1);  // the corrupt one is skipped

  REQUIRE(again.RemoveVolumeDirs("csi-a").ok());
  REQUIRE(again.Remove("csi-a").ok());
  CHECK_FALSE(fs::exists(again.VolumeDir("csi-a")));
  CHECK(again.Remove("csi-a").ok());  // already gone
}

TEST_CASE("the copy mounter gives the target its own copy and empties only its own", "[csi]") {
  TempTree tmp;
  const std::string lower = tmp.path() + "/lower", target = tmp.path() + "/pod/mount";
  WriteFile(lower + "/a.neff", "graph-a");
  WriteFile(lower + "/sub/b.neff", "graph-b");
  fs::create_directories(target);
  std::unique_ptr<Mounter> copy = NewCopyMounter();
  CHECK_FALSE(copy->IsMounted(target));
  REQUIRE(copy->Mount(lower, "", "", target).ok());
  CHECK(copy->IsMounted(target));
  CHECK(ReadFile(target + "/sub/b.neff") == "graph-b");
  CHECK(std::distance(fs::directory_iterator(target), fs::directory_iterator()) == 2);  // no marker
  WriteFile(target + "/a.neff", "rewritten");
  CHECK(ReadFile(lower + "/a.neff") == "graph-a");

  REQUIRE(copy->Unmount(target).ok());
  CHECK_FALSE(copy->IsMounted(target));
  CHECK(fs::is_empty(target));
  CHECK(ReadFile(lower + "/sub/b.neff") == "graph-b");

  // A directory it did not fill is not its to empty.
  WriteFile(target + "/someone-elses", "x");
  CHECK(copy->Unmount(target).ok());
  CHECK(fs::exists(target + "/someone-elses"));
}

TEST_CASE("mount points come from the mount table; overlay refuses option-breaking paths",
          "[csi]") {
  TempTree tmp;
  absl::StatusOr<bool> root = IsMountPoint("/");
  REQUIRE(root.ok());
  CHECK(*root);
  absl::StatusOr<bool> plain = IsMountPoint(tmp.path());
  REQUIRE(plain.ok());
  CHECK_FALSE(*plain);
  std::unique_ptr<Mounter> overlay = NewOverlayMounter();
  CHECK(absl::IsInvalidArgument(overlay->Mount("/a,b", "/u", "/w", tmp.path())));
  CHECK(absl::IsInvalidArgument(overlay->Mount("/a", "/u:x", "/w", tmp.path())));
  CHECK(overlay->Unmount(tmp.path() + "/missing").ok());  // not mounted: fine
}

}  // namespace
}  // namespace neuron::csi
