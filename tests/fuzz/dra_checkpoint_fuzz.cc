// File: tests/fuzz/dra_checkpoint_fuzz.cc
// The DRA plugin's checkpoint file, as a crash, a full disk or a curious admin may leave it:
// ParseCheckpoint answers or refuses, never crashes. An accepted checkpoint serialises back to
// the same state. Raw mutations almost never keep the checksum valid, so each input is also
// "re-sealed" (its checksum recomputed, when it is a JSON object) to reach the field checks.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/base/sha256.h"
#include "lib/dra/checkpoint.h"
#include "nlohmann/json.hpp"

namespace {

void Check(std::string_view in) {
  absl::StatusOr<neuron::dra::Checkpoint> c = neuron::dra::ParseCheckpoint(in);
  if (!c.ok()) return;
  absl::StatusOr<std::string> text = neuron::dra::SerializeCheckpoint(*c);
  if (!text.ok()) std::abort();  // what was read can be written
  absl::StatusOr<neuron::dra::Checkpoint> again = neuron::dra::ParseCheckpoint(*text);
  if (!again.ok() || !(*again == *c)) std::abort();
}

void FuzzOne(std::string_view in) {
  Check(in);
  if (in.size() > 65536) return;  // dump() recurses: bound the nesting a re-seal can meet
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return;
  doc.erase("checksum");
  const std::string body = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  doc["checksum"] = neuron::Sha256Hex(body);
  Check(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
