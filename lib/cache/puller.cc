// File: lib/cache/puller.cc
#include "lib/cache/puller.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/cache/compile_cache.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

// Fetches and extracts every layer into `staging`, removing each blob once extracted.
absl::Status FetchAndExtract(RegistryClient& registry, CacheStore& store, const ImageReference& ref,
                             const Manifest& manifest, const CredentialLookup& creds,
                             const PullOptions& opts, const std::function<bool()>& cancelled,
                             const std::string& staging, PullResult& result, ExtractStats& stats) {
  for (const Descriptor& layer : manifest.layers) {
    NEURON_ASSIGN_OR_RETURN(std::string blob, store.NewDownloadPath());
    const absl::Time t0 = absl::Now();
    absl::Status fetched = registry.FetchBlob(ref, layer, creds, blob,
                                              [&](uint64_t) { return !cancelled || !cancelled(); });
    result.fetch_time += absl::Now() - t0;
    if (!fetched.ok()) {
      std::error_code ec;
      std::filesystem::remove(blob, ec);
      return fetched;
    }
    result.fetched_bytes += layer.size;
    const absl::Time t1 = absl::Now();
    absl::Status extracted = ExtractLayer(blob, staging, opts.limits, stats, cancelled);
    result.extract_time += absl::Now() - t1;
    std::error_code ec;
    std::filesystem::remove(blob, ec);
    if (!extracted.ok()) {
      return absl::Status(extracted.code(),
                          absl::StrCat("layer ", layer.digest, ": ", extracted.message()));
    }
  }
  return absl::OkStatus();
}

// Scans the staged tree; FailedPrecondition when it targets another chip.
absl::StatusOr<ImageInfo> Inspect(const std::string& staging, const std::string& digest,
                                  const ExtractStats& stats, const PullOptions& opts) {
  NEURON_ASSIGN_OR_RETURN(CompileCacheSummary summary, ScanCompileCache(staging));
  if (opts.family) {
    NEURON_RETURN_IF_ERROR(CheckCompatible(summary, *opts.family));
  }
  ImageInfo info;
  info.digest = digest;
  info.bytes = stats.bytes;
  info.files = stats.files;
  info.modules = summary.modules;
  info.targets.assign(summary.targets.begin(), summary.targets.end());
  info.extracted_at = absl::Now();
  return info;
}

}  // namespace

absl::StatusOr<PullResult> PullImage(RegistryClient& registry, CacheStore& store,
                                     const ImageReference& ref, const CredentialLookup& creds,
                                     const PullOptions& opts,
                                     const std::function<bool()>& cancelled) {
  PullResult result;
  if (ref.digest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pull ", ref.ToString(), ": nodes pull by digest only"));
  }
  if (store.HasImage(ref.digest)) {
    NEURON_ASSIGN_OR_RETURN(result.info, store.ReadImageInfo(ref.digest));
    result.already_present = true;
    return result;
  }
  const absl::Time t0 = absl::Now();
  NEURON_ASSIGN_OR_RETURN(ResolvedImage resolved, registry.Resolve(ref, creds));
  result.fetch_time += absl::Now() - t0;
  NEURON_ASSIGN_OR_RETURN(std::string staging, store.NewStagingDir(ref.digest));
  ExtractStats stats;
  absl::Status st = FetchAndExtract(registry, store, ref, resolved.manifest, creds, opts, cancelled,
                                    staging, result, stats);
  absl::StatusOr<ImageInfo> info =
      st.ok() ? Inspect(staging, ref.digest, stats, opts) : absl::StatusOr<ImageInfo>(st);
  if (info.ok()) st = store.CommitStaging(staging, *info);
  if (!info.ok() || !st.ok()) {
    store.DiscardStaging(staging);
    return info.ok() ? st : info.status();
  }
  result.info = *std::move(info);
  spdlog::info("cache pulled image={} served_by={} layers={} bytes={} files={} modules={}",
               ref.ToString(), resolved.served_by, resolved.manifest.layers.size(),
               result.info.bytes, result.info.files, result.info.modules);
  return result;
}

FailureReport ClassifyPullError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kFailedPrecondition:
      return {CacheState::kIncompatible, "IncompatibleTarget", false};
    case absl::StatusCode::kDataLoss:
      return {CacheState::kFailed, "DigestMismatch", false};
    case absl::StatusCode::kInvalidArgument:
      return {CacheState::kFailed, "InvalidImage", false};
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return {CacheState::kFailed, "Unauthorized", true};
    case absl::StatusCode::kNotFound:
      return {CacheState::kFailed, "ImageNotFound", true};
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return {CacheState::kFailed, "RegistryUnavailable", true};
    case absl::StatusCode::kCancelled:
      return {CacheState::kPending, "Cancelled", true};
    default:
      return {CacheState::kFailed, "PullFailed", true};
  }
}

}  // namespace neuron::cache
