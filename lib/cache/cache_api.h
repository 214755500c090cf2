// File: lib/cache/cache_api.h
// The k8s.aws/v1alpha1 cache API as both sides read it (deploy/operator/crd-neuroncaches.yaml):
// NeuronCache / ClusterNeuronCache (what a user asks for) and NeuronCacheNode (what one node's
// agent reports). Plain strings at this boundary: the node store and the operator each keep
// their own typed state. No I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/k8s/resource.h"
#include "nlohmann/json.hpp"

namespace neuron::cache {

inline const k8s::ResourceRef kNeuronCaches{"k8s.aws", "v1alpha1", "neuroncaches", true};
inline const k8s::ResourceRef kClusterNeuronCaches{"k8s.aws", "v1alpha1", "clusterneuroncaches",
                                                   false};
inline const k8s::ResourceRef kNeuronCacheNodes{"k8s.aws", "v1alpha1", "neuroncachenodes", false};

inline constexpr char kNeuronCacheKind[] = "NeuronCache";
inline constexpr char kClusterNeuronCacheKind[] = "ClusterNeuronCache";
// The CSI driver's name, and the inline-volume attributes that name the cache.
inline constexpr char kCsiDriverName[] = "cache.neuron.aws.com";
inline constexpr char kVolumeAttrCache[] = "neuronCache";                // in the pod's namespace
inline constexpr char kVolumeAttrClusterCache[] = "clusterNeuronCache";  // cluster-scoped
// Where neuronx-cc looks by default (NEURON_COMPILE_CACHE_URL unset).
inline constexpr char kDefaultCompileCachePath[] = "/var/tmp/neuron-compile-cache";
// Held on a cache while any pod on any node still uses it.
inline constexpr char kInUseFinalizer[] = "k8s.aws/neuroncache-in-use";

// A NeuronCache or ClusterNeuronCache, as the node side and the operator need it.
struct CacheSpec {
  std::string kind;        // kNeuronCacheKind or kClusterNeuronCacheKind
  std::string namespace_;  // "" for ClusterNeuronCache
  std::string name;
  std::string uid;
  int64_t generation = 0;
  bool deleting = false;
  std::string image;
  std::vector<std::string> pull_secrets;
  std::string verify_digest;  // spec.verify.digest, "" = not pinned
  std::map<std::string, std::string> node_selector;
  std::string resolved_digest;  // status.resolvedDigest (written by the operator)

  // "NeuronCache team/llama" / "ClusterNeuronCache shared": for logs and messages.
  std::string Describe() const;
};

// InvalidArgument when the object lacks spec.image or carries mistyped fields.
absl::StatusOr<CacheSpec> ParseCacheObject(const nlohmann::json& obj, std::string_view kind);
// Every nodeSelector label is on the node with the same value (an empty selector selects all).
bool SelectsNode(const CacheSpec& spec, const nlohmann::json& node_labels);
// The digest nodes extract: the one in spec.image if it names one, else status.resolvedDigest;
// "" while the operator has not resolved the tag.
std::string WantedDigest(const CacheSpec& spec);
// The repository part of spec.image without tag or digest, for "<repo>@<digest>" pulls.
std::string ImageWithDigest(const CacheSpec& spec, std::string_view digest);

// One pod on the node using a cache (through a CSI volume or a DRA claim).
struct PodUse {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string digest;  // the image digest the pod was given
};

// One cache on one node, as NeuronCacheNode.status.caches[] holds it.
struct NodeCacheRecord {
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string image;
  std::string digest;
  std::string state;  // Pending, Pulling, Extracted, Failed, Incompatible
  std::string reason;
  std::string message;
  int64_t bytes = 0;
  absl::Time last_transition = absl::InfinitePast();
  std::vector<PodUse> pods;

  bool operator==(const NodeCacheRecord&) const;
};

struct NodeCacheReport {
  std::string node_name;
  std::string node_uid;  // for the ownerReference (the object goes when the Node goes)
  std::string family;    // the node's compiler target ("trn2"), "" if unknown
  int64_t disk_bytes = 0;
  std::vector<NodeCacheRecord> caches;
};

// The NeuronCacheNode object the node's agent writes (apiVersion, kind, metadata, status).
nlohmann::json BuildCacheNodeObject(const NodeCacheReport& report);
// Reads it back (the operator's side); tolerant of absent fields, InvalidArgument when mistyped.
absl::StatusOr<NodeCacheReport> ParseCacheNodeObject(const nlohmann::json& obj);

}  // namespace neuron::cache
