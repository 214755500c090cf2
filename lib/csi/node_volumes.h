// File: lib/csi/node_volumes.h
// The driver's decisions, without gRPC: NodePublishVolume and NodeUnpublishVolume over a
// VolumeBackend (which directory), a Mounter (how the view is made) and VolumeRecords (what a
// restarted driver must still undo). Safe to call from several threads; a second call for a
// volume that is still being worked on gets Aborted (the kubelet retries).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lib/csi/mounter.h"
#include "lib/csi/publish_request.h"
#include "lib/csi/volume_backend.h"
#include "lib/csi/volume_records.h"

namespace neuron::csi {

class NodeVolumes {
 public:
  NodeVolumes(std::string kubelet_dir, std::string state_dir, VolumeBackend& backend,
              Mounter& mounter);

  absl::Status Init();  // creates the state directory

  // Validates, acquires the backend directory, creates <state>/volumes/<id>/{upper,work} and the
  // target, records the volume and mounts. Published already at this target: OK. A failure after
  // Acquire releases it and removes what this call created.
  absl::Status Publish(const PublishRequest& req);
  // Unmounts (if mounted), removes the target, upper/work and the record, releases. A volume
  // without a record: OK.
  absl::Status Unpublish(const std::string& volume_id, const std::string& target_path);

  int active_volumes() const;  // volumes with a record (published or being published)
  std::vector<VolumeRecord> Published() const { return records_.List(); }

 private:
  absl::Status Claim(const std::string& volume_id);
  void Unclaim(const std::string& volume_id);
  absl::Status PublishClaimed(const PublishRequest& req, const std::string& pod,
                              std::string& lower);
  absl::Status MountNew(const PublishRequest& req, const std::string& lower,
                        const std::string& pod);
  absl::Status TearDown(const VolumeRecord& record);
  absl::Status UnpublishClaimed(const std::string& volume_id, const std::string& target_path,
                                std::string& lower);

  const std::string kubelet_dir_;
  VolumeBackend& backend_;
  Mounter& mounter_;
  VolumeRecords records_;
  mutable absl::Mutex mu_;
  std::set<std::string> busy_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::csi
