// File: lib/cache/registry_client.h
// Pulls an image from an OCI/Docker registry: resolves a reference to its manifest and streams
// blobs to disk, verifying every byte against its digest. Tries configured mirrors first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/cache/image_reference.h"
#include "lib/cache/oci_manifest.h"
#include "lib/cache/registry_auth.h"
#include "lib/cache/registry_session.h"

namespace neuron::cache {

struct RegistryOptions {
  std::string ca_file;                  // extra PEM CA bundle; "" = system store
  std::vector<std::string> plain_http;  // "host:port" contacted over http, not https
  // host -> mirrors tried first (registries.conf-style). A mirror is "host[:port]" (plain_http
  // decides the scheme) or "http://host:port" / "https://host:port".
  std::map<std::string, std::vector<std::string>> mirrors;
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration stall_timeout =
      absl::Seconds(30);  // no byte for this long -> Unavailable "stalled"
  uint64_t max_blob_bytes = 16ull << 30;
};

struct ResolvedImage {
  std::string digest;  // sha256 of the manifest (or index) bytes the reference resolved to
  Manifest manifest;
  std::string served_by;  // the registry or mirror host that answered
  std::string
      manifest_digest;  // the image manifest's own digest (differs from digest via an index)
};

class RegistryClient {
 public:
  explicit RegistryClient(RegistryOptions opts);

  // Manifest by tag or digest (following an index). The manifest digest is the sha256 of the
  // bytes served; with a digest reference a mismatch is DataLoss.
  absl::StatusOr<ResolvedImage> Resolve(const ImageReference& ref, const CredentialLookup& creds);

  // Streams the blob to dest_path (created/truncated), hashing as it goes; on a digest or size
  // mismatch removes the file and returns DataLoss naming expected and actual. `progress(bytes)`
  // is called as data arrives; returning false cancels (Cancelled).
  absl::Status FetchBlob(const ImageReference& ref, const Descriptor& blob,
                         const CredentialLookup& creds, const std::string& dest_path,
                         const std::function<bool(uint64_t)>& progress = {});

 private:
  struct Endpoint {
    std::string host;  // as configured: the name credentials are looked up by
    HttpUrl base;      // origin to contact (target unused)
  };
  std::vector<Endpoint> Endpoints(const std::string& registry) const;
  absl::StatusOr<ResolvedImage> ResolveAt(const Endpoint& ep, const ImageReference& ref,
                                          const CredentialLookup& creds);
  absl::StatusOr<std::string> GetManifest(const Endpoint& ep, const std::string& repo,
                                          const std::string& reference,
                                          const CredentialLookup& creds, std::string* content_type);
  absl::Status FetchBlobAt(const Endpoint& ep, const ImageReference& ref, const Descriptor& blob,
                           const CredentialLookup& creds, const std::string& dest_path,
                           const std::function<bool(uint64_t)>& progress);

  const RegistryOptions opts_;
  RegistrySession session_;
};

}  // namespace neuron::cache
