#include "lib/dra/checkpoint.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/json_ondemand.h"
#include "lib/base/sha256.h"
#include "lib/dra/atomic_file.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kKind[] = "NeuronDraCheckpoint";
constexpr int kMaxDepth = 16;  // our files nest 6 deep; reading and dump() below recurse

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint corrupt: ", std::string(what)));
}

// Sorted keys (nlohmann's object is a std::map), no spaces: one text per tree.
std::string Canonical(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json DeviceJson(const PreparedDevice& d) {
  return {{"requests", d.request_names},
          {"pool", d.pool},
          {"device", d.device},
          {"cdiDeviceIds", d.cdi_device_ids}};
}

json ClaimJson(const PreparedClaim& c) {
  json devices = json::array();
  for (const PreparedDevice& d : c.devices) devices.push_back(DeviceJson(d));
  json out = {{"namespace", c.namespace_name},
              {"name", c.name},
              {"state", c.state == ClaimState::kPrepared ? "prepared" : "preparing"},
              {"devices", std::move(devices)}};
  if (c.cache) {
    out["compileCache"] = {{"kind", c.cache->kind},
                           {"namespace", c.cache->namespace_name},
                           {"name", c.cache->name},
                           {"mountPath", c.cache->mount_path}};
  }
  return out;
}

// Typed reads that report instead of throwing.
absl::Status ReadString(const json& obj, const char* key, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return Corrupt(absl::StrCat(key, " is not a string"));
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadStrings(const json& obj, const char* key, std::vector<std::string>* out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return Corrupt(absl::StrCat(key, " is not a list"));
  for (const json& s : *it) {
    if (!s.is_string()) return Corrupt(absl::StrCat(key, " holds a non-string"));
    out->push_back(s.get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedDevice> DecodeDevice(const json& j) {
  if (!j.is_object()) return Corrupt("a device is not an object");
  PreparedDevice d;
  for (absl::Status s :
       {ReadStrings(j, "requests", &d.request_names), ReadString(j, "pool", &d.pool),
        ReadString(j, "device", &d.device), ReadStrings(j, "cdiDeviceIds", &d.cdi_device_ids)}) {
    if (!s.ok()) return s;
  }
  return d;
}

// Absent (files from before compile caches) or an object of four strings.
absl::Status DecodeCache(const json& claim, std::optional<PreparedCache>* out) {
  auto it = claim.find("compileCache");
  if (it == claim.end()) return absl::OkStatus();
  if (!it->is_object()) return Corrupt("compileCache is not an object");
  PreparedCache c;
  for (absl::Status s :
       {ReadString(*it, "kind", &c.kind), ReadString(*it, "namespace", &c.namespace_name),
        ReadString(*it, "name", &c.name), ReadString(*it, "mountPath", &c.mount_path)}) {
    if (!s.ok()) return s;
  }
  *out = std::move(c);
  return absl::OkStatus();
}

absl::StatusOr<PreparedClaim> DecodeClaim(const json& j) {
  if (!j.is_object()) return Corrupt("a claim is not an object");
  PreparedClaim c;
  std::string state;
  for (absl::Status s : {ReadString(j, "namespace", &c.namespace_name),
                         ReadString(j, "name", &c.name), ReadString(j, "state", &state)}) {
    if (!s.ok()) return s;
  }
  if (state != "prepared" && state != "preparing") return Corrupt("unknown claim state");
  c.state = state == "prepared" ? ClaimState::kPrepared : ClaimState::kPreparing;
  if (absl::Status s = DecodeCache(j, &c.cache); !s.ok()) return s;
  auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_array()) return Corrupt("devices is not a list");
  for (const json& d : *devices) {
    absl::StatusOr<PreparedDevice> device = DecodeDevice(d);
    if (!device.ok()) return device.status();
    c.devices.push_back(std::move(*device));
  }
  return c;
}

// The document as JSON, after the checks that need no knowledge of its fields.
absl::StatusOr<json> VerifiedDocument(std::string_view text) {
  const JsonInput in(text);
  JsonParser parser;
  simdjson::ondemand::document root;
  json doc;
  simdjson::error_code e = parser.Iterate(in).get(root);
  if (!e) e = ReadJsonTree(root, kMaxDepth, &doc);
  if (!e) e = ExpectEnd(root);
  if (e) {
    return Corrupt(absl::StrCat("not one JSON value (truncated?): ", simdjson::error_message(e)));
  }
  if (!doc.is_object()) return Corrupt("not a JSON object");
  if (doc.value("kind", json()) != kKind) return Corrupt(absl::StrCat("kind is not ", kKind));
  const json version = doc.value("version", json());
  if (!version.is_number_integer()) return Corrupt("version is not an integer");
  if (version != kCheckpointVersion) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint version ", Canonical(version),
                                                      " is not supported (want ",
                                                      kCheckpointVersion, ")"));
  }
  auto checksum = doc.find("checksum");
  if (checksum == doc.end() || !checksum->is_string()) return Corrupt("no checksum");
  const std::string want = checksum->get<std::string>();
  doc.erase("checksum");
  if (Sha256Hex(Canonical(doc)) != want) return Corrupt("checksum mismatch");
  return doc;
}

}  // namespace

absl::StatusOr<std::string> SerializeCheckpoint(const Checkpoint& checkpoint) {
  json claims = json::object();
  for (const auto& [uid, claim] : checkpoint.claims) claims[uid] = ClaimJson(claim);
  json doc = {{"kind", kKind}, {"version", kCheckpointVersion}, {"claims", std::move(claims)}};
  std::string body;
  try {
    body = doc.dump();  // strict: a string that is not UTF-8 must not be saved mangled
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint: ", e.what()));
  }
  doc["checksum"] = Sha256Hex(body);
  return Canonical(doc);
}

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view text) {
  absl::StatusOr<json> doc = VerifiedDocument(text);
  if (!doc.ok()) return doc.status();
  auto claims = doc->find("claims");
  if (claims == doc->end() || !claims->is_object()) return Corrupt("claims is not an object");
  Checkpoint out;
  for (const auto& [uid, value] : claims->items()) {
    absl::StatusOr<PreparedClaim> claim = DecodeClaim(value);
    if (!claim.ok()) return claim.status();
    out.claims.emplace(uid, std::move(*claim));
  }
  return out;
}

absl::Status SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint) {
  absl::StatusOr<std::string> text = SerializeCheckpoint(checkpoint);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

absl::StatusOr<Checkpoint> LoadCheckpoint(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) return Checkpoint{};
  if (!text.ok()) return text.status();
  absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(*text);
  if (!checkpoint.ok()) {
    return absl::Status(checkpoint.status().code(),
                        absl::StrCat(path, ": ", checkpoint.status().message()));
  }
  return checkpoint;
}

}  // namespace neuron::dra
