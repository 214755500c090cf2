// File: lib/cache/image_reference.h
// Image references as users write them in a NeuronCache ("host:5000/a/b:tag", "a/b@sha256:..",
// "ubuntu"), normalised the way docker and containerd do.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::cache {

struct ImageReference {
  std::string registry;    // "docker.io", "host:5000"
  std::string repository;  // "library/ubuntu", "a/b"
  std::string tag;         // "" when only a digest was given
  std::string digest;      // "sha256:<hex>" or ""
  // registry/repository[:tag][@digest]
  std::string ToString() const;
};

// "ubuntu" -> docker.io/library/ubuntu:latest. InvalidArgument naming the reason otherwise.
absl::StatusOr<ImageReference> ParseImageReference(std::string_view text);

// The host to contact for `registry`: "docker.io" is served by "registry-1.docker.io".
std::string RegistryEndpoint(std::string_view registry);

}  // namespace neuron::cache
