// File: tests/fuzz/json_scanner_fuzz.cc
// Differential fuzzing of JsonScanner against nlohmann's full parser: both must agree on whether
// a document is valid JSON, a skipped value's text must parse to the same tree, and every read
// must end in a value or a recorded error, never a crash; any bytes escaped by AppendJsonString
// must read back as valid JSON. The scanner is lenient where Go is
// (invalid UTF-8, lone surrogates), so inputs with bytes >= 0x80 or \u escapes only check safety;
// so do inputs with NUL bytes, where nlohmann stops reading and we (like Go) do not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/base/json_escape.h"
#include "lib/base/json_scanner.h"
#include "nlohmann/json.hpp"

namespace neuron {
namespace {

bool Comparable(std::string_view in) {
  for (unsigned char c : in) {
    if (c >= 0x80 || c == 0) return false;  // nlohmann also ends its input at a NUL byte
  }
  // An exponent or a run of 300+ digits can put a number out of double's range: nlohmann then
  // refuses the document, while the grammar (ours, and Go's json.Valid) accepts it.
  size_t digits = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool digit = in[i] >= '0' && in[i] <= '9';
    digits = digit ? digits + 1 : 0;
    if (digits >= 300) return false;
    if (i > 0 && (in[i] == 'e' || in[i] == 'E') && in[i - 1] >= '0' && in[i - 1] <= '9') {
      return false;
    }
  }
  return in.find("\\u") == std::string_view::npos;
}

// Walks every value with the typed readers, as a consumer would.
void Walk(JsonScanner& s, int budget) {
  JsonScanner::Type t;
  if (budget <= 0 || !s.Peek(&t)) {
    s.Skip();
    return;
  }
  std::string_view key, str;
  int64_t i = 0;
  bool b = false;
  switch (t) {
    case JsonScanner::Type::kObject:
      if (!s.EnterObject()) return;
      while (s.NextMember(&key)) Walk(s, budget - 1);
      return;
    case JsonScanner::Type::kArray:
      if (!s.EnterArray()) return;
      while (s.NextItem()) Walk(s, budget - 1);
      return;
    case JsonScanner::Type::kString:
      s.ReadStringView(&str);
      return;
    case JsonScanner::Type::kBool:
      s.ReadBool(&b);
      return;
    case JsonScanner::Type::kNull:
      s.ConsumeNull();
      return;
    case JsonScanner::Type::kNumber:
      if (!s.ReadInt64(&i)) return;
      return;
  }
}

void FuzzOne(std::string_view in) {
  JsonScanner skipper(in);
  std::string_view raw;
  const bool skipped = skipper.Skip(&raw);
  const bool valid = skipped && skipper.AtEnd();
  if (skipped && !skipper.ok()) std::abort();
  // Past the depth limit the scanner refuses what a full parser accepts, by design.
  const bool too_deep =
      std::string(skipper.error().message()).find("nested deeper") != std::string::npos;
  if (Comparable(in) && !too_deep) {
    if (valid != nlohmann::json::accept(in)) std::abort();
    if (valid && nlohmann::json::parse(raw) != nlohmann::json::parse(in)) std::abort();
  }
  const bool inside = raw.data() >= in.data() && raw.data() + raw.size() <= in.data() + in.size();
  if (valid && (raw.empty() || !inside)) std::abort();
  // Any bytes written as a JSON string read back as valid JSON; valid UTF-8 exactly.
  std::string quoted;
  AppendJsonString(quoted, in);
  JsonScanner reader(quoted);
  std::string back;
  if (!reader.ReadString(&back) || !reader.AtEnd()) std::abort();
  if (!nlohmann::json::accept(quoted)) std::abort();
  if (nlohmann::json::parse(quoted).get<std::string>() != back) std::abort();

  JsonScanner walker(in);
  Walk(walker, 200);
  if (!walker.ok() && walker.error().ok()) std::abort();
}

}  // namespace
}  // namespace neuron

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuron::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
