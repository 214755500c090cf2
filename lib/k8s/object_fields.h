// File: lib/k8s/object_fields.h
// Field lists (JsonKeep) shared by the caches that list and watch API objects: the one way an
// object is trimmed before it is kept. Each cache names what it reads; these are the parts
// every cache needs or never needs.
#pragma once

#include <vector>

#include "lib/base/json_prune.h"

namespace neuron::k8s {

// "metadata" with what a cache keys on and a watch resumes from (name, namespace, uid,
// resourceVersion, generation), plus `extra` members of metadata.
JsonKeep::Member IdentityMetadata(std::vector<JsonKeep::Member> extra = {});

// Everything but bookkeeping no controller reads: metadata.managedFields and the
// kubectl last-applied-configuration annotation (together often most of an object's bytes).
const JsonKeep& WithoutBookkeeping();

}  // namespace neuron::k8s
