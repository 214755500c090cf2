// File: tests/fuzz/json_ondemand_fuzz.cc
// Differential fuzzing of our simdjson On-Demand readers (lib/base/json_ondemand.h,
// lib/base/json_prune.h) against nlohmann's full parser: reading a whole document must accept
// exactly what nlohmann accepts and give the same tree; a pruned read must give the full tree
// pruned; every read ends in a value or an error, never a crash. Inputs where the two differ by
// design only check safety: NUL bytes (nlohmann stops there), exponents and long digit runs
// (out of double's range), and nesting past our depth limit. Any bytes escaped by
// AppendJsonString must read back as valid JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/base/json_escape.h"
#include "lib/base/json_ondemand.h"
#include "lib/base/json_prune.h"
#include "nlohmann/json.hpp"

namespace neuron {
namespace {

using nlohmann::json;

constexpr int kDepth = 64;

bool Comparable(std::string_view in) {
  if (in.find('\0') != std::string_view::npos) return false;
  size_t digits = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool digit = in[i] >= '0' && in[i] <= '9';
    digits = digit ? digits + 1 : 0;
    if (digits >= 300) return false;
    if (i > 0 && (in[i] == 'e' || in[i] == 'E') && in[i - 1] >= '0' && in[i - 1] <= '9') {
      return false;
    }
  }
  return true;
}

// The whole document through On-Demand; `deep` when it failed on our depth limit.
bool ReadWhole(std::string_view in, json* out, bool* deep) {
  const JsonInput input(in);
  JsonParser parser;
  simdjson::ondemand::document doc;
  simdjson::error_code e = parser.Iterate(input).get(doc);
  if (!e) e = ReadJsonTree(doc, kDepth, out);
  if (!e) e = ExpectEnd(doc);
  if (e) (void)JsonErrorAt("fuzz", e, doc, input);  // must not crash whatever the state
  *deep = e == simdjson::DEPTH_ERROR;
  return !e;
}

void CheckPruned(std::string_view in, const json& whole, bool valid) {
  const JsonKeep keep = JsonKeep::Of({{"a"}, {"b", JsonKeep::EachItem(JsonKeep::Of({{"c"}}))}});
  absl::StatusOr<json> pruned = ParsePruned(in, keep, kDepth);
  if (!pruned.ok()) {
    if (pruned.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return;
  }
  if (!valid || !whole.is_object()) return;  // what was passed over may be invalid
  json want = json::object();
  for (const char* k : {"a", "b"}) {
    if (whole.contains(k)) want[k] = whole[k];
  }
  if (want.contains("b") && want["b"].is_array()) {
    for (json& item : want["b"]) {
      if (!item.is_object()) continue;
      json c = json::object();
      if (item.contains("c")) c["c"] = item["c"];
      item = std::move(c);
    }
  }
  if (*pruned != want) std::abort();
}

void FuzzOne(std::string_view in) {
  json whole;
  bool deep = false;
  const bool valid = ReadWhole(in, &whole, &deep);
  if (Comparable(in) && !deep) {
    const json full = json::parse(in.begin(), in.end(), nullptr, /*allow_exceptions=*/false);
    if (valid == full.is_discarded()) std::abort();
    if (valid && whole != full) std::abort();
  }
  CheckPruned(in, whole, valid);
  // Any bytes written as a JSON string read back as valid JSON.
  std::string quoted;
  AppendJsonString(quoted, in);
  json back;
  if (!ReadWhole(quoted, &back, &deep) || !back.is_string()) std::abort();
  if (!json::accept(quoted) || json::parse(quoted) != back) std::abort();
}

}  // namespace
}  // namespace neuron

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuron::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
