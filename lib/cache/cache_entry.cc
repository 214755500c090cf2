// JSON encodings of the cache store's records and the checks on names and digests.
#include "lib/cache/cache_entry.h"

#include <array>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/status_macros.h"
#include "lib/cache/absl_view.h"
#include "nlohmann/json.hpp"

namespace neuron::cache {
namespace {

using nlohmann::json;

constexpr size_t kMaxNameLength = 253;
constexpr std::string_view kDigestPrefix = "sha256:";
constexpr size_t kDigestHexLength = 64;

constexpr std::array<std::pair<CacheState, std::string_view>, 5> kStateNames = {{
    {CacheState::kPending, "Pending"},
    {CacheState::kPulling, "Pulling"},
    {CacheState::kExtracted, "Extracted"},
    {CacheState::kFailed, "Failed"},
    {CacheState::kIncompatible, "Incompatible"},
}};

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string TimeText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

// Time fields are RFC 3339; a missing or unparsable one reads as the epoch.
absl::Time TimeField(const json& j, const char* key) {
  absl::Time t = absl::UnixEpoch();
  const json* v = Member(j, key);
  if (v == nullptr || !v->is_string()) return t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, v->get<std::string>(), &t, &err)) {
    return absl::UnixEpoch();
  }
  return t;
}

std::string StringField(const json& j, const char* key) { return StringOf(Member(j, key)); }

uint64_t UintField(const json& j, const char* key) {
  const json* v = Member(j, key);
  if (v == nullptr || !v->is_number_unsigned()) return 0;
  return v->get<uint64_t>();
}

// Parses `text` as one JSON object; nlohmann's exceptions stay here.
absl::StatusOr<json> ParseObject(std::string_view text, std::string_view source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError(absl::StrCat(Sv(source), ": not a JSON object"));
  }
  return j;
}

absl::Status RequireDigest(const json& j, std::string_view source) {
  if (absl::Status s = ValidateDigest(StringField(j, "digest")); !s.ok()) {
    return absl::DataLossError(absl::StrCat(Sv(source), ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

std::string CacheKey::ToString() const {
  if (kind == CacheKind::kCluster) return absl::StrCat("ClusterNeuronCache/", name);
  return absl::StrCat("NeuronCache/", namespace_, "/", name);
}

std::string_view CacheKindName(CacheKind kind) {
  return kind == CacheKind::kCluster ? "ClusterNeuronCache" : "NeuronCache";
}

std::string_view CacheStateName(CacheState state) {
  for (const auto& [s, name] : kStateNames) {
    if (s == state) return name;
  }
  return "Unknown";
}

absl::StatusOr<CacheState> ParseCacheState(std::string_view name) {
  for (const auto& [s, n] : kStateNames) {
    if (n == name) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown cache state \"", Sv(name), "\""));
}

absl::Status ValidateName(std::string_view what, std::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength && IsAlnum(name[0]);
  for (size_t i = 1; ok && i < name.size(); ++i) {
    const char c = name[i];
    ok = IsAlnum(c) || c == '.' || c == '_' || c == '-';
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", Sv(what), " \"", absl::CHexEscape(Sv(name.substr(0, kMaxNameLength + 1))),
      "\": want [A-Za-z0-9][A-Za-z0-9._-]*, at most 253 characters"));
}

absl::Status ValidateDigest(std::string_view digest) {
  bool ok = digest.size() == kDigestPrefix.size() + kDigestHexLength &&
            digest.substr(0, kDigestPrefix.size()) == kDigestPrefix;
  for (size_t i = kDigestPrefix.size(); ok && i < digest.size(); ++i) {
    const char c = digest[i];
    ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid image digest \"", absl::CHexEscape(Sv(digest.substr(0, 100))),
                   "\": want sha256: followed by 64 lowercase hex digits"));
}

std::string_view DigestHex(std::string_view digest) { return digest.substr(kDigestPrefix.size()); }

std::string CacheEntryToJson(const CacheEntry& entry) {
  const json j = {{"image", entry.image},
                  {"digest", entry.digest},
                  {"state", std::string(CacheStateName(entry.state))},
                  {"reason", entry.reason},
                  {"message", entry.message},
                  {"generation", entry.generation},
                  {"updated", TimeText(entry.updated)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<CacheEntry> CacheEntryFromJson(std::string_view text, std::string_view source) {
  NEURON_ASSIGN_OR_RETURN(json j, ParseObject(text, source));
  absl::StatusOr<CacheState> state = ParseCacheState(StringField(j, "state"));
  if (!state.ok()) {
    return absl::DataLossError(absl::StrCat(Sv(source), ": ", state.status().message()));
  }
  CacheEntry entry;
  entry.image = StringField(j, "image");
  entry.digest = StringField(j, "digest");
  entry.state = *state;
  entry.reason = StringField(j, "reason");
  entry.message = StringField(j, "message");
  if (j.contains("generation") && j["generation"].is_number_integer()) {
    entry.generation = j["generation"].get<int64_t>();
  }
  entry.updated = TimeField(j, "updated");
  return entry;
}

std::string ImageInfoToJson(const ImageInfo& info) {
  const json j = {{"digest", info.digest},   {"bytes", info.bytes},
                  {"files", info.files},     {"modules", info.modules},
                  {"targets", info.targets}, {"extractedAt", TimeText(info.extracted_at)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<ImageInfo> ImageInfoFromJson(std::string_view text, std::string_view source) {
  NEURON_ASSIGN_OR_RETURN(json j, ParseObject(text, source));
  NEURON_RETURN_IF_ERROR(RequireDigest(j, source));
  ImageInfo info;
  info.digest = StringField(j, "digest");
  info.bytes = UintField(j, "bytes");
  info.files = UintField(j, "files");
  info.modules = UintField(j, "modules");
  if (j.contains("targets") && j["targets"].is_array()) {
    for (const json& t : j["targets"]) {
      if (t.is_string()) info.targets.push_back(t.get<std::string>());
    }
  }
  info.extracted_at = TimeField(j, "extractedAt");
  return info;
}

std::string RefInfoToJson(const RefInfo& ref) {
  const json j = {
      {"digest", ref.digest},    {"user", ref.user},      {"podNamespace", ref.pod_namespace},
      {"podName", ref.pod_name}, {"podUID", ref.pod_uid}, {"since", TimeText(ref.since)},
      {"cache", ref.cache}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<RefInfo> RefInfoFromJson(std::string_view text, std::string_view source) {
  NEURON_ASSIGN_OR_RETURN(json j, ParseObject(text, source));
  NEURON_RETURN_IF_ERROR(RequireDigest(j, source));
  RefInfo ref;
  ref.digest = StringField(j, "digest");
  ref.user = StringField(j, "user");
  ref.pod_namespace = StringField(j, "podNamespace");
  ref.pod_name = StringField(j, "podName");
  ref.pod_uid = StringField(j, "podUID");
  ref.since = TimeField(j, "since");
  ref.cache = StringField(j, "cache");
  return ref;
}

}  // namespace neuron::cache
