// File: lib/assignment/annotations.h
// The pod handshake between the scheduler extender and the device plugin, as it is written on
// the pod: four annotation keys, merged key by key (other keys are never touched).
//   extender, at bind:        AWS_NEURON_IDS=<ids of the kind>, NEURON_RESOURCE_TYPE=neuron|
//                             neuroncore, NEURON_ALLOCATED=false, NEURON_ALLOC_TIME=<unix ns>
//   device plugin, after Allocate: the IDs the pod really holds and NEURON_ALLOCATED=true.
// An Assignment is what those keys say; Parse and Format are the only readers and writers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/assignment/ids.h"

namespace neuron::assignment {

inline constexpr char kAnnotationIds[] = "AWS_NEURON_IDS";
inline constexpr char kAnnotationType[] = "NEURON_RESOURCE_TYPE";
inline constexpr char kAnnotationAllocated[] = "NEURON_ALLOCATED";
inline constexpr char kAnnotationAllocTime[] = "NEURON_ALLOC_TIME";

struct Assignment {
  ResourceKind kind = ResourceKind::kDevice;
  std::vector<int> ids;
  // false: chosen by the extender, not yet allocated by the kubelet; true: what the pod holds.
  bool allocated = false;
  // When the extender chose (unix ns); orders pending choices. Absent once allocated.
  std::optional<int64_t> chosen_at_ns;

  bool operator==(const Assignment&) const = default;
};

using Annotations = std::map<std::string, std::string>;

// The keys an Assignment is written as (NEURON_ALLOC_TIME only when chosen_at_ns is set).
// IDs are written in the order given.
Annotations Format(const Assignment& a);

// The Assignment the annotations hold. NotFound when AWS_NEURON_IDS is absent; InvalidArgument
// when a key is malformed (unknown type, bad ID list, NEURON_ALLOCATED neither "true" nor
// "false"). A missing NEURON_ALLOCATED reads as allocated=false (callers that need the key
// itself look it up); a bad NEURON_ALLOC_TIME reads as absent (it only orders choices).
absl::StatusOr<Assignment> Parse(const Annotations& annotations);

}  // namespace neuron::assignment
