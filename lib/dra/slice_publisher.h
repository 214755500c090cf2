// Publishes one node's ResourceSlices (driver neuron.aws.com) to the API server: the I/O side of
// resource_slice.h, kept out of lib/dra's pure target (CMake target neuron::dra_publish).
//
// Publish(slices) makes the node's slices exactly `slices`:
//  - the served API version is picked once by discovery: resource.k8s.io/v1, else v1beta1
//    (Kubernetes 1.32/1.33, or 1.34+ with v1 switched off), rendered in that version's shape;
//  - each slice is server-side applied (field manager neuron-dra-driver) under its
//    deterministic name "<node>-neuron.aws.com-<i>" with the Node as controller owner (its UID
//    read once), so slices go when the node object goes;
//  - slices of this node and driver that are not wanted any more are deleted;
//  - the publisher owns pool.generation: any change of the pool's content raises it by one and
//    re-applies every slice (all slices of a pool must carry the newest generation, and
//    schedulers ignore older ones); a model's pool_generation is only a lower bound.
// An unchanged Publish makes no request at all: it compares with what it applied last. The
// first Publish (and the first after Invalidate() or a failure) lists the server's slices
// instead, so a restarted driver neither rewrites identical slices nor lowers the generation.
//
// API calls are retried with backoff on kUnavailable (a RetryingTransport underneath multiplies
// the attempts); other errors return at once, annotated with what was being done.
#ifndef NEURON_LIB_DRA_SLICE_PUBLISHER_H_
#define NEURON_LIB_DRA_SLICE_PUBLISHER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/backoff.h"
#include "lib/base/clock.h"
#include "lib/dra/resource_slice.h"
#include "lib/dra/resource_slice_json.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

inline constexpr char kFieldManager[] = "neuron-dra-driver";

struct SlicePublisherOptions {
  std::string field_manager = kFieldManager;
  int max_attempts = 5;  // per API call, >= 1
  BackoffPolicy backoff{absl::Milliseconds(200), absl::Seconds(10), 2.0, 0.2};
  Clock* clock = nullptr;  // null = Clock::Real()
};

class SlicePublisher {
 public:
  SlicePublisher(k8s::RestClient& client, std::string node_name,
                 SlicePublisherOptions options = {});

  // `slices` as BuildResourceSlices returns them for this node (empty: remove them all).
  // InvalidArgument if a slice names another node, driver or pool, or names repeat;
  // FailedPrecondition if the server serves no ResourceSlices; the API error otherwise (after
  // retries when kUnavailable). On failure the next Publish re-reads the server.
  absl::Status Publish(const std::vector<ResourceSliceModel>& slices);

  // Forgets what was applied, the chosen version and the Node's UID: the next Publish asks the
  // server again. For periodic resyncs, and after the slices may have been changed by others.
  void Invalidate();

  // As of the last successful Publish (0 before).
  int64_t pool_generation() const;
  // The version chosen by discovery, once known.
  std::optional<ResourceApi> api() const;

 private:
  absl::Status ChooseApi() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadNodeUid() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadLiveSlices() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Renders `slices` at `generation` as spec objects by slice name.
  std::map<std::string, nlohmann::json> Render(const std::vector<ResourceSliceModel>& slices,
                                               int64_t generation) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Unchanged(const std::map<std::string, nlohmann::json>& specs) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Apply(const std::string& name, const nlohmann::json& spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Remove(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Sync(const std::vector<ResourceSliceModel>& slices)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `call` until it returns something other than kUnavailable, at most max_attempts times.
  absl::Status Retry(const std::function<absl::Status()>& call);

  k8s::RestClient& client_;
  const std::string node_name_;
  const SlicePublisherOptions options_;

  mutable absl::Mutex mu_;
  std::optional<ResourceApi> api_ ABSL_GUARDED_BY(mu_);
  k8s::ResourceRef ref_ ABSL_GUARDED_BY(mu_);
  std::string node_uid_ ABSL_GUARDED_BY(mu_);
  bool known_ ABSL_GUARDED_BY(mu_) = false;  // applied_/stored_ reflect the server
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // By slice name: the spec last applied (or listed), and the spec the server returned.
  std::map<std::string, nlohmann::json> applied_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, nlohmann::json> stored_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_SLICE_PUBLISHER_H_
