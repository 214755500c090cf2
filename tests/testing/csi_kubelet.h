// File: tests/testing/csi_kubelet.h
// The kubelet's two CSI calls for an inline ephemeral volume, as it makes them for a CSIDriver
// with podInfoOnMount (the volume's attributes plus the csi.storage.k8s.io/* pod fields).
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <string>

namespace neuron::testing {

struct InlineVolume {
  std::string socket;  // the driver's csi.sock
  std::string volume_id;
  std::string target;  // <kubelet>/pods/<uid>/volumes/kubernetes.io~csi/<name>/mount
  std::string pod_namespace, pod_name, pod_uid;
  std::map<std::string, std::string> attributes;  // the pod's volumeAttributes
};

// The kubelet creates the target's parent; the driver creates the target itself.
grpc::Status CsiPublish(const InlineVolume& v);
grpc::Status CsiUnpublish(const InlineVolume& v);

}  // namespace neuron::testing
