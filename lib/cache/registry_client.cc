// File: lib/cache/registry_client.cc
#include "lib/cache/registry_client.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/cache/digest.h"

namespace neuron::cache {
namespace {

struct FetchedManifest {
  std::string body;
  std::string content_type;
  std::string digest;
};

absl::Status WithContext(const absl::Status& s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

absl::Status ErrnoError(int err, absl::string_view what, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

HttpTransportOptions Transport(const RegistryOptions& o) {
  HttpTransportOptions t;
  t.ca_file = o.ca_file;
  t.connect_timeout = o.connect_timeout;
  t.stall_timeout = o.stall_timeout;
  return t;
}

}  // namespace

RegistryClient::RegistryClient(RegistryOptions opts)
    : opts_(std::move(opts)), session_(Transport(opts_)) {}

std::vector<RegistryClient::Endpoint> RegistryClient::Endpoints(const std::string& registry) const {
  auto make = [&](const std::string& entry) {
    Endpoint e;
    if (absl::StartsWith(entry, "http://") || absl::StartsWith(entry, "https://")) {
      absl::StatusOr<HttpUrl> u = ParseHttpUrl(entry);
      if (u.ok()) e.base = *u;
      // A malformed mirror URL then fails to connect with its own text in the error.
      e.host = u.ok() ? e.base.host_port : entry;
      return e;
    }
    e.host = entry;
    e.base.host_port = RegistryEndpoint(entry);
    e.base.tls = std::find(opts_.plain_http.begin(), opts_.plain_http.end(), entry) ==
                 opts_.plain_http.end();
    return e;
  };
  std::vector<Endpoint> out;
  if (auto it = opts_.mirrors.find(registry); it != opts_.mirrors.end()) {
    for (const std::string& m : it->second) out.push_back(make(m));
  }
  out.push_back(make(registry));
  return out;
}

absl::StatusOr<ResolvedImage> RegistryClient::Resolve(const ImageReference& ref,
                                                      const CredentialLookup& creds) {
  const std::vector<Endpoint> endpoints = Endpoints(ref.registry);
  std::string mirror_errors;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    absl::StatusOr<ResolvedImage> r = ResolveAt(endpoints[i], ref, creds);
    if (r.ok()) {
      r->served_by = endpoints[i].host;
      return r;
    }
    if (i + 1 == endpoints.size()) {
      if (mirror_errors.empty()) return r.status();
      return WithContext(r.status(), absl::StrCat("mirrors failed first (", mirror_errors, ")"));
    }
    absl::StrAppend(&mirror_errors, mirror_errors.empty() ? "" : "; ", r.status().message());
  }
  return absl::InternalError("no endpoint to resolve from");  // Endpoints is never empty
}

absl::StatusOr<std::string> RegistryClient::GetManifest(const Endpoint& ep, const std::string& repo,
                                                        const std::string& reference,
                                                        const CredentialLookup& creds,
                                                        std::string* content_type) {
  HttpRequest req;
  req.url = ep.base;
  req.url.target = absl::StrCat("/v2/", repo, "/manifests/", reference);
  req.accept = ManifestAcceptHeader();
  req.max_body = kMaxManifestBytes;
  NEURON_ASSIGN_OR_RETURN(HttpResponse r, session_.Get(ep.host, repo, std::move(req), creds));
  if (r.status != 200) return HttpStatusError(r, ep.host, repo, "manifest " + reference);
  const std::string digest = Sha256Digest(r.body);
  // A digest reference, or the registry's own claim, must match the bytes we got.
  for (const std::string& want : {reference, r.docker_content_digest}) {
    if (IsValidDigest(want) && want != digest) {
      return absl::DataLossError(absl::StrCat("registry ", ep.host, " served manifest ", reference,
                                              " of repo ", repo, " with digest ", digest,
                                              "; expected ", want));
    }
  }
  *content_type = r.content_type;
  return r.body;
}

absl::StatusOr<ResolvedImage> RegistryClient::ResolveAt(const Endpoint& ep,
                                                        const ImageReference& ref,
                                                        const CredentialLookup& creds) {
  std::string reference = ref.digest.empty() ? ref.tag : ref.digest;
  ResolvedImage out;
  // An index points at an image manifest; an index pointing at an index is not followed.
  for (int depth = 0; depth < 2; ++depth) {
    std::string content_type;
    NEURON_ASSIGN_OR_RETURN(std::string body,
                            GetManifest(ep, ref.repository, reference, creds, &content_type));
    const std::string digest = Sha256Digest(body);
    if (depth == 0) out.digest = digest;
    absl::StatusOr<ParsedManifest> parsed = ParseManifest(body, content_type);
    if (!parsed.ok()) {
      return WithContext(parsed.status(), absl::StrCat(ref.ToString(), " from ", ep.host));
    }
    if (parsed->manifest) {
      out.manifest = *std::move(parsed->manifest);
      out.manifest_digest = digest;
      return out;
    }
    reference = parsed->index_choice->digest;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      ref.ToString(), " from ", ep.host, ": image index points at another index (not supported)"));
}

absl::Status RegistryClient::FetchBlob(const ImageReference& ref, const Descriptor& blob,
                                       const CredentialLookup& creds, const std::string& dest_path,
                                       const std::function<bool(uint64_t)>& progress) {
  if (!IsValidDigest(blob.digest)) {
    return absl::InvalidArgumentError(absl::StrCat("blob digest \"", blob.digest.substr(0, 80),
                                                   "\" is not sha256:<64 lowercase hex>"));
  }
  if (blob.size > opts_.max_blob_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("blob ", blob.digest, " is ", blob.size,
                                                   " bytes, over the limit of ",
                                                   opts_.max_blob_bytes));
  }
  const std::vector<Endpoint> endpoints = Endpoints(ref.registry);
  std::string mirror_errors;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    absl::Status s = FetchBlobAt(endpoints[i], ref, blob, creds, dest_path, progress);
    if (s.ok() || absl::IsCancelled(s)) return s;
    if (i + 1 == endpoints.size()) {
      if (mirror_errors.empty()) return s;
      return WithContext(s, absl::StrCat("mirrors failed first (", mirror_errors, ")"));
    }
    absl::StrAppend(&mirror_errors, mirror_errors.empty() ? "" : "; ", s.message());
  }
  return absl::InternalError("no endpoint to fetch from");  // Endpoints is never empty
}

absl::Status RegistryClient::FetchBlobAt(const Endpoint& ep, const ImageReference& ref,
                                         const Descriptor& blob, const CredentialLookup& creds,
                                         const std::string& dest_path,
                                         const std::function<bool(uint64_t)>& progress) {
  std::FILE* file = std::fopen(dest_path.c_str(), "wb");
  if (file == nullptr) return ErrnoError(errno, "cannot create", dest_path);
  const std::string what =
      absl::StrCat("blob ", blob.digest, " of ", ref.ToString(), " from ", ep.host);
  Sha256 hash;
  uint64_t received = 0;
  HttpRequest req;
  req.url = ep.base;
  req.url.target = absl::StrCat("/v2/", ref.repository, "/blobs/", blob.digest);
  req.sink = [&](absl::string_view chunk) -> absl::Status {
    received += chunk.size();
    if (received > blob.size) {
      return absl::DataLossError(
          absl::StrCat(what, ": served more than the expected ", blob.size, " bytes"));
    }
    if (std::fwrite(chunk.data(), 1, chunk.size(), file) != chunk.size()) {
      return ErrnoError(errno, "cannot write", dest_path);
    }
    hash.Update(std::string_view(chunk.data(), chunk.size()));
    if (progress && !progress(received)) {
      return absl::CancelledError(absl::StrCat(what, ": cancelled after ", received, " bytes"));
    }
    return absl::OkStatus();
  };
  absl::StatusOr<HttpResponse> r = session_.Get(ep.host, ref.repository, std::move(req), creds);
  absl::Status s = r.status();
  if (s.ok() && r->status != 200) s = HttpStatusError(*r, ep.host, ref.repository, what);
  if (std::fclose(file) != 0 && s.ok()) s = ErrnoError(errno, "cannot write", dest_path);
  if (s.ok() && received != blob.size) {
    s = absl::DataLossError(absl::StrCat(what, ": expected ", blob.size, " bytes, got ", received));
  }
  if (s.ok()) {
    const std::string actual = "sha256:" + hash.HexDigest();
    if (actual != blob.digest) {
      s = absl::DataLossError(
          absl::StrCat(what, ": expected digest ", blob.digest, ", got ", actual));
    }
  }
  if (!s.ok()) std::remove(dest_path.c_str());
  return s;
}

}  // namespace neuron::cache
