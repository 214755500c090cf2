// File: lib/cache/oci_manifest.h
// Image manifests as registries serve them: OCI image manifest v1 and Docker schema 2, and the
// indexes (OCI index, Docker manifest list) that point at one manifest per platform.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::cache {

inline constexpr char kOciManifestType[] = "application/vnd.oci.image.manifest.v1+json";
inline constexpr char kOciIndexType[] = "application/vnd.oci.image.index.v1+json";
inline constexpr char kDockerManifestType[] =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr char kDockerListType[] =
    "application/vnd.docker.distribution.manifest.list.v2+json";
// The Accept header for manifest requests: every type ParseManifest understands.
std::string ManifestAcceptHeader();

inline constexpr size_t kMaxManifestBytes = 4u << 20;
inline constexpr size_t kMaxLayers = 1000;

struct Descriptor {
  std::string media_type;
  std::string digest;  // validated "sha256:<hex>"
  uint64_t size = 0;
};

struct Manifest {
  std::string media_type;
  Descriptor config;
  std::vector<Descriptor> layers;
};

// Exactly one of the two is set: the manifest itself, or (for an index) the child to fetch next,
// which is the linux/amd64 entry or the index's only entry.
struct ParsedManifest {
  std::optional<Manifest> manifest;
  std::optional<Descriptor> index_choice;
};

// `content_type` is the response's Content-Type (parameters allowed); the body's own mediaType
// wins when present. InvalidArgument for bad JSON, unsupported types, oversize bodies or lists.
absl::StatusOr<ParsedManifest> ParseManifest(std::string_view body, std::string_view content_type);

}  // namespace neuron::cache
