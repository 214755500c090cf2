// File: lib/csi/volume_records.h
// The driver's on-disk state, so that a restarted driver can unpublish what an earlier one
// published:
//   <state_dir>/volumes/<id>.json          {"volume_id","target_path","lower_dir","pod","mounter"}
//   <state_dir>/volumes/<id>/{upper,work}  the volume's private writes (overlay upper/workdir)
// Records are written atomically (temp file, fsync, rename), before the mount is made.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::csi {

struct VolumeRecord {
  std::string volume_id;
  std::string target_path;
  std::string lower_dir;
  std::string pod;      // namespace/name, for logs
  std::string mounter;  // "overlay" / "copy"
};

class VolumeRecords {
 public:
  explicit VolumeRecords(std::string state_dir);

  // Creates <state_dir>/volumes.
  absl::Status Init() const;

  std::string RecordPath(const std::string& volume_id) const;
  std::string VolumeDir(const std::string& volume_id) const;
  std::string UpperDir(const std::string& volume_id) const {
    return VolumeDir(volume_id) + "/upper";
  }
  std::string WorkDir(const std::string& volume_id) const { return VolumeDir(volume_id) + "/work"; }

  absl::Status Write(const VolumeRecord& record) const;
  // NotFound when there is no record; DataLoss when it cannot be parsed.
  absl::StatusOr<VolumeRecord> Read(const std::string& volume_id) const;
  absl::Status Remove(const std::string& volume_id) const;
  // Every parseable record (unparseable ones are logged and skipped).
  std::vector<VolumeRecord> List() const;

  // Recreates empty upper/work directories for the volume (removing leftovers).
  absl::Status CreateVolumeDirs(const std::string& volume_id) const;
  absl::Status RemoveVolumeDirs(const std::string& volume_id) const;

 private:
  std::string volumes_dir_;
};

}  // namespace neuron::csi
