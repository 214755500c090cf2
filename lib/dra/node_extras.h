// File: lib/dra/node_extras.h
// What the DRA driver adds to the inventory's view of its node, from elsewhere:
//   * the node's UltraServer identity, read from the Neuron driver's class attributes
//     (lib/ultraserver ReadIdentity) at every slice build and every claim: cheap (a handful of
//     small sysfs reads), and the driver's election may finish or change after we start;
//   * the EC2 network node layers from the Node's labels (node_labels.h), read with one GET at
//     every slice build (start, inventory changes, the periodic resync): a label change reaches
//     the slices within one resync (10 minutes by default), without a watch on the Node. When the
//     GET fails the last layers read stay.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lib/dra/resource_slice.h"
#include "lib/dra/ultraserver_placement.h"
#include "lib/k8s/rest_client.h"
#include "lib/sysfs/fs.h"

namespace neuron::dra {

class NodeExtras {
 public:
  NodeExtras(const sysfs::Fs& fs, k8s::RestClient& client, std::string node_name);

  // The identity now. A malformed attribute is logged and read as no UltraServer (the node's
  // ordinary devices must still be published); busy or I/O errors stay in status.
  UltraServerFacts UltraServer() const;
  // Sets info.ultraserver and info.network_node_layers. While the Neuron driver is busy (or a
  // read fails) the last identity read stays; before any was read that is Unavailable, and the
  // slice worker retries with backoff rather than publish the node without its node device.
  absl::Status Fill(NodeDeviceInfo& info);

 private:
  std::array<std::string, 3> Layers();

  const sysfs::Fs& fs_;
  k8s::RestClient& client_;
  const std::string node_name_;
  absl::Mutex mu_;
  std::array<std::string, 3> layers_ ABSL_GUARDED_BY(mu_);
  std::optional<UltraServerFacts> last_identity_ ABSL_GUARDED_BY(mu_);  // the last one read
};

}  // namespace neuron::dra
