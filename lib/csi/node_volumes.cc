// File: lib/csi/node_volumes.cc
#include "lib/csi/node_volumes.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace neuron::csi {

namespace fs = std::filesystem;

namespace {

// The overlay's root directory is the upper directory: give it the node copy's mode and owner
// so the view's root looks (and permits) like the cache itself.
void MirrorRoot(const std::string& lower, const std::string& upper) {
  struct stat st {};
  if (::stat(lower.c_str(), &st) != 0) return;
  if (::chmod(upper.c_str(), st.st_mode & 07777) != 0 ||
      ::chown(upper.c_str(), st.st_uid, st.st_gid) != 0) {
    spdlog::warn("csi cannot give upper dir the cache's mode/owner upper={} error=\"{}\"", upper,
                 std::strerror(errno));
  }
}

std::string Outcome(const absl::Status& s) {
  return s.ok() ? "ok" : absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message());
}

}  // namespace

NodeVolumes::NodeVolumes(std::string kubelet_dir, std::string state_dir, VolumeBackend& backend,
                         Mounter& mounter)
    : kubelet_dir_(std::move(kubelet_dir)),
      backend_(backend),
      mounter_(mounter),
      records_(std::move(state_dir)) {}

absl::Status NodeVolumes::Init() { return records_.Init(); }

int NodeVolumes::active_volumes() const { return static_cast<int>(records_.List().size()); }

absl::Status NodeVolumes::Claim(const std::string& volume_id) {
  absl::MutexLock lock(&mu_);
  if (!busy_.insert(volume_id).second) {
    return absl::AbortedError(
        absl::StrCat("an operation on volume ", volume_id, " is already in progress"));
  }
  return absl::OkStatus();
}

void NodeVolumes::Unclaim(const std::string& volume_id) {
  absl::MutexLock lock(&mu_);
  busy_.erase(volume_id);
}

absl::Status NodeVolumes::Publish(const PublishRequest& req) {
  const std::string pod = PodOf(req.context);
  std::string lower;
  absl::Status s = ValidatePublish(req, kubelet_dir_);
  if (s.ok()) s = Claim(req.volume_id);
  if (s.ok()) {
    s = PublishClaimed(req, pod, lower);
    Unclaim(req.volume_id);
  }
  auto log = s.ok() ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(log, "csi publish volume={} pod={} lower={} target={} mounter={} outcome=\"{}\"",
              req.volume_id, pod, lower.empty() ? "-" : lower, req.target_path, mounter_.name(),
              Outcome(s));
  return s;
}

absl::Status NodeVolumes::PublishClaimed(const PublishRequest& req, const std::string& pod,
                                         std::string& lower) {
  absl::StatusOr<VolumeRecord> rec = records_.Read(req.volume_id);
  if (rec.ok()) {
    if (rec->target_path != req.target_path) {
      return absl::AlreadyExistsError(
          absl::StrCat("volume ", req.volume_id, " is already published at ", rec->target_path));
    }
    if (mounter_.IsMounted(req.target_path)) {
      lower = rec->lower_dir;
      return absl::OkStatus();  // the kubelet retried a publish that had succeeded
    }
    // Recorded but not mounted: an earlier attempt died half way. Undo it and start over.
    NEURON_RETURN_IF_ERROR(TearDown(*rec));
    backend_.Release(req.volume_id);
  } else if (!absl::IsNotFound(rec.status())) {
    spdlog::warn("csi replacing unreadable volume record volume={} error=\"{}\"", req.volume_id,
                 std::string(rec.status().message()));
  }
  NEURON_ASSIGN_OR_RETURN(lower, backend_.Acquire(req.volume_id, req.context));
  absl::Status s = MountNew(req, lower, pod);
  if (!s.ok()) backend_.Release(req.volume_id);
  return s;
}

absl::Status NodeVolumes::MountNew(const PublishRequest& req, const std::string& lower,
                                   const std::string& pod) {
  const std::string& id = req.volume_id;
  const std::string& target = req.target_path;
  std::error_code ec;
  const bool created_target = !fs::exists(target, ec);
  absl::Status s = records_.CreateVolumeDirs(id);
  if (s.ok()) {
    MirrorRoot(lower, records_.UpperDir(id));
    fs::create_directories(target, ec);
    if (ec) s = absl::InternalError(absl::StrCat("creating target ", target, ": ", ec.message()));
  }
  // Recorded before mounting: a crash after the mount still leaves a record to undo it by.
  if (s.ok()) s = records_.Write(VolumeRecord{id, target, lower, pod, mounter_.name()});
  if (s.ok()) s = mounter_.Mount(lower, records_.UpperDir(id), records_.WorkDir(id), target);
  if (s.ok()) return s;
  records_.Remove(id).IgnoreError();
  records_.RemoveVolumeDirs(id).IgnoreError();
  if (created_target) fs::remove(target, ec);
  return s;
}

absl::Status NodeVolumes::Unpublish(const std::string& volume_id, const std::string& target_path) {
  std::string lower;
  absl::Status s = ValidateVolumeId(volume_id);
  if (s.ok()) s = ValidateTargetPath(target_path, kubelet_dir_);
  if (s.ok()) s = Claim(volume_id);
  if (s.ok()) {
    s = UnpublishClaimed(volume_id, target_path, lower);
    Unclaim(volume_id);
  }
  auto log = s.ok() ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(log, "csi unpublish volume={} lower={} target={} outcome=\"{}\"", volume_id,
              lower.empty() ? "-" : lower, target_path, Outcome(s));
  return s;
}

absl::Status NodeVolumes::UnpublishClaimed(const std::string& volume_id,
                                           const std::string& target_path, std::string& lower) {
  absl::StatusOr<VolumeRecord> rec = records_.Read(volume_id);
  if (absl::IsNotFound(rec.status())) return absl::OkStatus();  // never published, or done
  VolumeRecord record = rec.ok() ? *rec : VolumeRecord{volume_id, target_path, "", "", ""};
  if (record.target_path != target_path) {
    return absl::InvalidArgumentError(absl::StrCat("volume ", volume_id, " is published at ",
                                                   record.target_path, ", not ", target_path));
  }
  lower = record.lower_dir;
  NEURON_RETURN_IF_ERROR(TearDown(record));
  backend_.Release(volume_id);
  return absl::OkStatus();
}

absl::Status NodeVolumes::TearDown(const VolumeRecord& record) {
  const std::string& target = record.target_path;
  if (mounter_.IsMounted(target)) {
    NEURON_RETURN_IF_ERROR(mounter_.Unmount(target));
  }
  std::error_code ec;
  // Not remove_all: if the view were somehow still there, that would delete through it.
  fs::remove(target, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("removing target ", target, " after unmount: ", ec.message()));
  }
  NEURON_RETURN_IF_ERROR(records_.RemoveVolumeDirs(record.volume_id));
  return records_.Remove(record.volume_id);
}

}  // namespace neuron::csi
