// File: tests/fuzz/dra_config_fuzz.cc
// The opaque claim config (ResourceClaim parameters, written by any user who can create a claim)
// through ParseOpaqueConfig (NeuronConfig or UltraServerConfig) and ParseNeuronConfig: an answer
// or an InvalidArgument, never a crash. Accepted input is valid JSON (checked against nlohmann
// where the two parsers agree: ASCII without \u escapes, which our lenient scanner and
// nlohmann's strict one treat differently), is exactly one kind with values in range (LNC 1 or
// 2, ultraserverMode 1, 2 or 4, a compileCache of one kind with an object name and an absolute
// printable-ASCII mountPath without ".."), parses back the same from its canonical form, and the
// two parsers agree on NeuronConfigs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/dra/neuron_config.h"
#include "nlohmann/json.hpp"

namespace {

bool Ascii(std::string_view in) {
  for (unsigned char c : in) {
    if (c >= 0x80 || c == 0) {
      return false;
    }
  }
  return in.find("\\u") == std::string_view::npos;
}

std::string Canonical(const neuron::dra::OpaqueConfig& c) {
  std::string out = R"({"apiVersion":"neuron.aws.com/v1","kind":)";
  if (c.ultraserver) {
    return out + R"("UltraServerConfig","ultraserverMode":)" +
           std::to_string(c.ultraserver->ultraserver_mode) + "}";
  }
  out += R"("NeuronConfig")";
  if (c.neuron->logical_neuron_core) {
    out += ",\"logicalNeuronCore\":" + std::to_string(*c.neuron->logical_neuron_core);
  }
  if (const auto& cache = c.neuron->compile_cache) {
    // Checked printable ASCII (CheckCache), so dump() cannot throw.
    const bool cluster = cache->kind == neuron::dra::kClusterNeuronCacheKind;
    out += std::string(",\"compileCache\":{\"") + (cluster ? "clusterCache" : "name") +
           "\":" + nlohmann::json(cache->name).dump() +
           ",\"mountPath\":" + nlohmann::json(cache->mount_path).dump() + "}";
  }
  return out + "}";
}

bool Printable(const std::string& s) {
  for (char ch : s) {
    if (ch < 0x20 || ch > 0x7e) {
      return false;
    }
  }
  return true;
}

void CheckCache(const neuron::dra::CompileCacheConfig& c) {
  if (c.kind != neuron::dra::kNeuronCacheKind && c.kind != neuron::dra::kClusterNeuronCacheKind) {
    std::abort();
  }
  if (c.name.empty() ||
      c.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos) {
    std::abort();
  }
  const std::string& p = c.mount_path;
  if (p.empty() || p[0] != '/' || !Printable(p) || p.find_first_not_of('/') == std::string::npos ||
      ("/" + p + "/").find("/../") != std::string::npos) {
    std::abort();
  }
}

void CheckValues(const neuron::dra::OpaqueConfig& c) {
  if (c.neuron.has_value() == c.ultraserver.has_value()) {
    std::abort();
  }
  if (c.neuron) {
    const std::optional<int> lnc = c.neuron->logical_neuron_core;
    if (lnc.has_value() && *lnc != 1 && *lnc != 2) {
      std::abort();
    }
    if (c.neuron->compile_cache) {
      CheckCache(*c.neuron->compile_cache);
    }
  } else {
    const int mode = c.ultraserver->ultraserver_mode;
    if (mode != 1 && mode != 2 && mode != 4) {
      std::abort();
    }
  }
}

void FuzzOne(std::string_view in) {
  absl::StatusOr<neuron::dra::OpaqueConfig> c = neuron::dra::ParseOpaqueConfig(in);
  absl::StatusOr<neuron::dra::NeuronConfig> n = neuron::dra::ParseNeuronConfig(in);
  if (!n.ok() && n.status().code() != absl::StatusCode::kInvalidArgument) {
    std::abort();
  }
  if (!c.ok()) {
    if (c.status().code() != absl::StatusCode::kInvalidArgument || n.ok()) {
      std::abort();  // a NeuronConfig is always a valid opaque config
    }
    return;
  }
  CheckValues(*c);
  if (n.ok() != c->neuron.has_value() || (n.ok() && !(*n == *c->neuron))) {
    std::abort();
  }
  if (Ascii(in) && !nlohmann::json::accept(in)) {
    std::abort();
  }
  absl::StatusOr<neuron::dra::OpaqueConfig> again = neuron::dra::ParseOpaqueConfig(Canonical(*c));
  if (!again.ok() || !(*again == *c)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
