// File: tests/fuzz/dra_config_fuzz.cc
// The opaque claim config (ResourceClaim parameters, written by any user who can create a claim)
// through ParseNeuronConfig: an answer or an InvalidArgument, never a crash. Accepted input is
// valid JSON (checked against nlohmann where the two parsers agree: ASCII without \u escapes,
// which our lenient scanner and nlohmann's strict one treat differently), names the right kind
// and an LNC of 1 or 2, and parses back the same from its canonical form.
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
    if (c >= 0x80 || c == 0) return false;
  }
  return in.find("\\u") == std::string_view::npos;
}

void FuzzOne(std::string_view in) {
  absl::StatusOr<neuron::dra::NeuronConfig> c = neuron::dra::ParseNeuronConfig(in);
  if (!c.ok()) {
    if (c.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return;
  }
  const std::optional<int> lnc = c->logical_neuron_core;
  if (lnc.has_value() && *lnc != 1 && *lnc != 2) std::abort();
  if (Ascii(in) && !nlohmann::json::accept(in)) std::abort();
  std::string canonical = R"({"apiVersion":"neuron.aws.com/v1","kind":"NeuronConfig")";
  if (lnc) canonical += ",\"logicalNeuronCore\":" + std::to_string(*lnc);
  canonical += "}";
  absl::StatusOr<neuron::dra::NeuronConfig> again = neuron::dra::ParseNeuronConfig(canonical);
  if (!again.ok() || !(*again == *c)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
