// File: lib/sysfs/parsers.cc
#include "lib/sysfs/parsers.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neuron::sysfs {
namespace {

// Printable excerpt of a bad value for error messages (bounded, control bytes escaped).
std::string Quote(absl::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  if (text.size() > 40) out += "...";
  return out + "\"";
}

absl::Status Invalid(absl::string_view what, absl::string_view why, absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", why, " in ", Quote(text)));
}

// Removes exactly one trailing newline, if any.
absl::string_view StripOneNewline(absl::string_view text) {
  absl::ConsumeSuffix(&text, "\n");
  return text;
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Strict decimal u64: digits only, no sign, no spaces, overflow detected.
absl::StatusOr<uint64_t> StrictU64(absl::string_view what, absl::string_view field,
                                   absl::string_view whole) {
  if (field.empty()) return Invalid(what, "empty value", whole);
  if (field[0] == '-') return Invalid(what, "negative value", whole);
  if (!AllDigits(field)) return Invalid(what, "not a decimal number", whole);
  uint64_t v = 0;
  for (char c : field) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      return Invalid(what, "value overflows 64 bits", whole);
    }
    v = v * 10 + d;
  }
  return v;
}

// Strict fixed-point decimal ("42", "42.25"), non-negative, finite.
absl::StatusOr<double> StrictDecimal(absl::string_view what, absl::string_view field,
                                     absl::string_view whole) {
  if (field.empty()) return Invalid(what, "empty value", whole);
  if (field[0] == '-') return Invalid(what, "negative value", whole);
  const size_t dot = field.find('.');
  absl::string_view ip = field.substr(0, dot);
  absl::string_view fp = dot == absl::string_view::npos ? "" : field.substr(dot + 1);
  if (!AllDigits(ip) || (dot != absl::string_view::npos && !AllDigits(fp))) {
    return Invalid(what, "not a decimal number", whole);
  }
  if (ip.size() > 15 || fp.size() > 15) return Invalid(what, "value out of range", whole);
  double v = 0;
  if (!absl::SimpleAtod(field, &v) || !std::isfinite(v)) {
    return Invalid(what, "not a decimal number", whole);
  }
  return v;
}

}  // namespace

absl::StatusOr<uint64_t> ParseU64(absl::string_view text) {
  if (text.empty()) return Invalid("counter", "empty value", text);
  absl::string_view body = StripOneNewline(text);
  if (body.empty()) return Invalid("counter", "empty value", text);
  return StrictU64("counter", body, text);
}

absl::StatusOr<int> ParseCoreCount(absl::string_view text) {
  absl::string_view body = StripOneNewline(text);
  auto v = StrictU64("core_count", body, text);
  if (!v.ok()) return v.status();
  if (*v == 0 || *v > 1024) return Invalid("core_count", "out of range 1..1024", text);
  return static_cast<int>(*v);
}

absl::StatusOr<std::vector<int>> ParseConnectedDevices(absl::string_view text) {
  absl::string_view body = StripOneNewline(text);
  std::vector<int> out;
  if (body.empty()) return out;
  std::set<int> seen;
  for (absl::string_view field : absl::StrSplit(body, ',')) {
    absl::ConsumePrefix(&field, " ");
    if (field.empty()) return Invalid("connected_devices", "empty entry (truncated?)", text);
    auto v = StrictU64("connected_devices", field, text);
    if (!v.ok()) return v.status();
    if (*v > 1023) return Invalid("connected_devices", "device index out of range", text);
    const int idx = static_cast<int>(*v);
    if (!seen.insert(idx).second) return Invalid("connected_devices", "duplicate index", text);
    out.push_back(idx);
  }
  return out;
}

absl::StatusOr<PowerUtilization> ParsePowerUtilization(absl::string_view text) {
  constexpr absl::string_view kWhat = "power utilization";
  absl::string_view body = StripOneNewline(text);
  if (body.empty()) return Invalid(kWhat, "empty value", text);
  std::vector<absl::string_view> f = absl::StrSplit(body, ',');
  if (f.size() < 5) return Invalid(kWhat, "truncated (want status,timestamp,min,max,avg)", text);
  if (f.size() > 5) return Invalid(kWhat, "too many fields", text);
  PowerUtilization p;
  if (f[0].empty() || f[0].size() > 32) return Invalid(kWhat, "bad status", text);
  for (char c : f[0]) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return Invalid(kWhat, "bad status", text);
    }
  }
  p.status = std::string(f[0]);
  // The driver prints the enum name; accept a bare 0 as "valid" too (older docs).
  p.valid = p.status == "POWER_STATUS_VALID" || p.status == "0";
  auto ts = StrictU64(kWhat, f[1], text);
  if (!ts.ok()) return ts.status();
  p.timestamp = *ts;
  double* dst[] = {&p.min, &p.max, &p.avg};
  for (int i = 0; i < 3; ++i) {
    auto v = StrictDecimal(kWhat, f[2 + i], text);
    if (!v.ok()) return v.status();
    if (*v > 100.0) return Invalid(kWhat, "percentage above 100", text);
    *dst[i] = *v;
  }
  // Only a valid sample is checked: without data the driver may print its reset values
  // (min = 100.00, max = 0.00).
  if (p.valid && (p.min > p.max || p.avg < p.min || p.avg > p.max)) {
    return Invalid(kWhat, "inconsistent min/max/avg", text);
  }
  return p;
}

absl::StatusOr<uint32_t> ParseHexU32(absl::string_view text) {
  constexpr absl::string_view kWhat = "hex value";
  absl::string_view body = StripOneNewline(text);
  if (body.empty()) return Invalid(kWhat, "empty value", text);
  if (!absl::ConsumePrefix(&body, "0x") && !absl::ConsumePrefix(&body, "0X")) {
    return Invalid(kWhat, "missing 0x prefix", text);
  }
  if (body.empty()) return Invalid(kWhat, "truncated", text);
  if (body.size() > 8) return Invalid(kWhat, "value overflows 32 bits", text);
  uint32_t v = 0;
  for (char c : body) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!absl::ascii_isxdigit(u)) return Invalid(kWhat, "not a hexadecimal number", text);
    const uint32_t d = absl::ascii_isdigit(u)
                           ? static_cast<uint32_t>(u - '0')
                           : static_cast<uint32_t>(absl::ascii_tolower(u) - 'a' + 10);
    v = (v << 4) | d;
  }
  return v;
}

absl::StatusOr<int> ParseNumaNode(absl::string_view text) {
  absl::string_view body = StripOneNewline(text);
  if (body == "-1") return -1;
  if (!body.empty() && body[0] == '-') return Invalid("numa_node", "negative value", text);
  auto v = StrictU64("numa_node", body, text);
  if (!v.ok()) return v.status();
  if (*v > 4095) return Invalid("numa_node", "out of range", text);
  return static_cast<int>(*v);
}

absl::StatusOr<std::string> ParseToken(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  if (body.empty()) return Invalid("attribute", "empty value", text);
  if (body.size() > 256) return Invalid("attribute", "value too long", text);
  for (char c : body) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return Invalid("attribute", "not a single printable word", text);
  }
  return std::string(body);
}

absl::StatusOr<std::string> ParseUnhealthyComponents(absl::string_view text) {
  // Limits on the words, not only the bytes: the joined form must itself be a valid value, so
  // that what we report re-reads the same (many one-letter words would outgrow a byte cap).
  constexpr size_t kMaxBytes = 4096, kMaxWords = 32, kMaxWordBytes = 64;
  if (text.size() > kMaxBytes) return Invalid("unhealthy_components", "value too long", text);
  std::vector<absl::string_view> words;
  for (absl::string_view w : absl::StrSplit(text, absl::ByAnyChar(" ,\t\n"), absl::SkipEmpty())) {
    for (char c : w) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f) return Invalid("unhealthy_components", "control byte", text);
    }
    if (w.size() > kMaxWordBytes) return Invalid("unhealthy_components", "word too long", text);
    if (words.size() == kMaxWords) return Invalid("unhealthy_components", "too many words", text);
    words.push_back(w);
  }
  if (words.size() == 1 && (words[0] == "0" || absl::EqualsIgnoreCase(words[0], "none"))) {
    return std::string();
  }
  return absl::StrJoin(words, ", ");
}

absl::StatusOr<int> ParseLncValue(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  auto v = StrictU64("LNC", body, text);
  if (!v.ok()) return v.status();
  if (*v < 1 || *v > 8) return Invalid("LNC", "out of range 1..8", text);
  return static_cast<int>(*v);
}

absl::StatusOr<int> ParseLogicalNcConfig(absl::string_view text) {
  if (text.size() > 4096) return Invalid("logical_nc_config", "file too long", text);
  std::optional<int> value;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    absl::ConsumePrefix(&line, "export ");
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "NEURON_LOGICAL_NC_CONFIG")) {
      line = absl::StripAsciiWhitespace(line);
      if (!absl::ConsumePrefix(&line, "=")) {
        return Invalid("logical_nc_config", "expected NEURON_LOGICAL_NC_CONFIG=<n>", text);
      }
      line = absl::StripAsciiWhitespace(line);
      if (line.size() >= 2 && (line.front() == '"' || line.front() == '\'') &&
          line.back() == line.front()) {
        line = line.substr(1, line.size() - 2);
      }
    }
    auto v = ParseLncValue(line);
    if (!v.ok()) return Invalid("logical_nc_config", "not an LNC value", text);
    value = *v;
  }
  if (!value) return Invalid("logical_nc_config", "no NEURON_LOGICAL_NC_CONFIG value", text);
  return *value;
}

}  // namespace neuron::sysfs
