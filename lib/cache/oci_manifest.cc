// File: lib/cache/oci_manifest.cc
#include "lib/cache/oci_manifest.h"

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "lib/base/status_macros.h"
#include "lib/cache/digest.h"

namespace neuron::cache {
namespace {

using nlohmann::json;

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("image manifest: ", why));
}

std::string StringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

absl::StatusOr<Descriptor> ParseDescriptor(const json& j, absl::string_view where) {
  if (!j.is_object()) return Invalid(absl::StrCat(where, " is not an object"));
  Descriptor d;
  d.media_type = StringField(j, "mediaType");
  d.digest = StringField(j, "digest");
  if (!IsValidDigest(d.digest)) {
    return Invalid(absl::StrCat(where, " digest \"", d.digest.substr(0, 80),
                                "\" is not sha256:<64 lowercase hex>"));
  }
  auto size = j.find("size");
  if (size == j.end() || !size->is_number_unsigned()) {
    return Invalid(absl::StrCat(where, " has no non-negative integer size"));
  }
  d.size = size->get<uint64_t>();
  return d;
}

absl::StatusOr<Manifest> ParseImageManifest(const json& j, std::string media_type) {
  Manifest m;
  m.media_type = std::move(media_type);
  auto config = j.find("config");
  if (config == j.end()) return Invalid("no config descriptor");
  NEURON_ASSIGN_OR_RETURN(m.config, ParseDescriptor(*config, "config"));
  auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array()) return Invalid("no layers array");
  if (layers->size() > kMaxLayers) {
    return Invalid(absl::StrCat(layers->size(), " layers (at most ", kMaxLayers, ")"));
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    NEURON_ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor((*layers)[i], absl::StrCat("layer ", i)));
    m.layers.push_back(std::move(d));
  }
  return m;
}

bool IsLinuxAmd64(const json& entry) {
  auto p = entry.find("platform");
  if (p == entry.end() || !p->is_object()) return false;
  return StringField(*p, "os") == "linux" && StringField(*p, "architecture") == "amd64";
}

absl::StatusOr<Descriptor> PickFromIndex(const json& j) {
  auto list = j.find("manifests");
  if (list == j.end() || !list->is_array()) return Invalid("index has no manifests array");
  if (list->size() > kMaxLayers) return Invalid("index lists too many manifests");
  if (list->empty()) return Invalid("index lists no manifests");
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_object() || !IsLinuxAmd64((*list)[i])) continue;
    return ParseDescriptor((*list)[i], absl::StrCat("index entry ", i));
  }
  if (list->size() == 1) return ParseDescriptor((*list)[0], "index entry 0");
  return Invalid(absl::StrCat("index lists ", list->size(), " manifests and none for linux/amd64"));
}

// "application/vnd.oci.image.manifest.v1+json; charset=utf-8" -> the bare lowercase type.
std::string BareType(absl::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(content_type));
}

}  // namespace

std::string ManifestAcceptHeader() {
  return absl::StrJoin({kOciManifestType, kDockerManifestType, kOciIndexType, kDockerListType},
                       ", ");
}

absl::StatusOr<ParsedManifest> ParseManifest(std::string_view body, std::string_view content_type) {
  if (body.size() > kMaxManifestBytes) {
    return Invalid(absl::StrCat(body.size(), " bytes (at most ", kMaxManifestBytes, ")"));
  }
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid("not valid JSON");
  if (!j.is_object()) return Invalid("not a JSON object");
  auto schema = j.find("schemaVersion");
  if (schema == j.end() || !schema->is_number_integer() || schema->get<int64_t>() != 2) {
    return Invalid("schemaVersion is not 2 (Docker schema 1 is not supported)");
  }
  std::string type = StringField(j, "mediaType");
  if (type.empty()) type = BareType(absl::string_view(content_type.data(), content_type.size()));
  // OCI lets a manifest omit mediaType; with a generic Content-Type, go by its shape.
  if (type.empty() || type == "application/json") {
    type = j.contains("manifests") ? kOciIndexType : kOciManifestType;
  }
  ParsedManifest out;
  if (type == kOciManifestType || type == kDockerManifestType) {
    NEURON_ASSIGN_OR_RETURN(out.manifest, ParseImageManifest(j, type));
  } else if (type == kOciIndexType || type == kDockerListType) {
    NEURON_ASSIGN_OR_RETURN(out.index_choice, PickFromIndex(j));
  } else {
    return Invalid(absl::StrCat("unsupported media type \"", type.substr(0, 100), "\""));
  }
  return out;
}

}  // namespace neuron::cache
