#include "lib/dra/neuron_config.h"

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/base/json_scanner.h"

namespace neuron::dra {
namespace {

// Far more than a config needs; hostile nesting stops here.
constexpr int kMaxDepth = 8;
constexpr size_t kMaxQuoted = 40;  // of a bad value, in an error message

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("NeuronConfig: ", what));
}

std::string Shown(absl::string_view raw) {
  return raw.size() <= kMaxQuoted ? std::string(raw)
                                  : absl::StrCat(raw.substr(0, kMaxQuoted), "...");
}

absl::Status ReadLnc(JsonScanner& s, std::optional<int>* lnc) {
  std::string_view std_raw;
  if (!s.Skip(&std_raw)) return Invalid(s.error().message());
  const absl::string_view raw(std_raw.data(), std_raw.size());
  int v = 0;
  if (!absl::SimpleAtoi(raw, &v) || (v != 1 && v != 2) || raw.front() == '+') {
    return Invalid(absl::StrCat("logicalNeuronCore must be 1 or 2, got ", Shown(raw)));
  }
  *lnc = v;
  return absl::OkStatus();
}

absl::Status ReadField(JsonScanner& s, const std::string& key, std::string* api, std::string* kind,
                       std::optional<int>* lnc) {
  if (key == "logicalNeuronCore") return ReadLnc(s, lnc);
  std::string* out = key == "apiVersion" ? api : key == "kind" ? kind : nullptr;
  if (out == nullptr) {
    return Invalid(absl::StrCat("unknown field \"", Shown(key), "\"",
                                key == "ultraserverMode" ? " (a field of UltraServerConfig)" : ""));
  }
  if (!s.ReadString(out)) return Invalid(absl::StrCat(key, " must be a string"));
  return absl::OkStatus();
}

absl::Status Expect(absl::string_view field, absl::string_view got, absl::string_view want) {
  if (got == want) return absl::OkStatus();
  if (got.empty()) return Invalid(absl::StrCat(field, " is missing (want \"", want, "\")"));
  return Invalid(absl::StrCat(field, " must be \"", want, "\", got \"", Shown(got), "\""));
}

}  // namespace

absl::StatusOr<NeuronConfig> ParseNeuronConfig(std::string_view json_bytes) {
  JsonScanner s(json_bytes, kMaxDepth);
  JsonScanner::Type type;
  if (!s.Peek(&type) || type != JsonScanner::Type::kObject || !s.EnterObject()) {
    return Invalid("parameters must be a JSON object");
  }
  std::string api, kind;
  std::optional<int> lnc;
  std::set<std::string> seen;
  std::string_view key_view;
  while (s.NextMember(&key_view)) {
    const std::string key(key_view);  // the view dies with the next call
    if (!seen.insert(key).second) return Invalid(absl::StrCat("duplicate field \"", key, "\""));
    if (absl::Status st = ReadField(s, key, &api, &kind, &lnc); !st.ok()) return st;
  }
  if (!s.ok() || !s.AtEnd()) {
    return Invalid(
        absl::StrCat("not valid JSON: ", s.ok() ? "trailing data" : s.error().message()));
  }
  if (absl::Status st = Expect("apiVersion", api, kConfigApiVersion); !st.ok()) return st;
  if (absl::Status st = Expect("kind", kind, kNeuronConfigKind); !st.ok()) return st;
  return NeuronConfig{lnc};
}

}  // namespace neuron::dra
