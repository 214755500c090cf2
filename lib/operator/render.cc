// File: lib/operator/render.cc
#include "lib/operator/render.h"

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "yaml-cpp/yaml.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// Plain scalars some YAML reader would not take for a string: YAML 1.2 core-schema null, bools,
// numbers; the YAML 1.1 words (yes, on, y, ...) that Go's yaml.v2 (kubectl) still reads as
// bools; and anything that starts like a number and holds only characters of YAML 1.1 numbers
// and dates (1_000, 1:30, 0b101, 2001-12-14). Quoting a string that needed none is harmless;
// "128Mi" or "10m" stay plain.
//
// Hand-written, not std::regex: libstdc++'s regex recurses per character, so a string of a few
// hundred KB in a manifest would overflow the stack.
bool IsWord(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      "~",    "null", "Null",  "NULL",  "true",  "True",  "TRUE",  "false", "False", "FALSE",
      "y",    "Y",    "yes",   "Yes",   "YES",   "n",     "N",     "no",    "No",    "NO",
      "on",   "On",   "ON",    "off",   "Off",   "OFF",   ".inf",  ".Inf",  ".INF",  ".nan",
      ".NaN", ".NAN", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  for (std::string_view w : kWords) {
    if (s == w) return true;
  }
  return false;
}

// [-+]?\.?[0-9][0-9a-fA-FxXoO_.:+ tTzZ-]*
bool IsNumberLike(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') ++i;
  if (i >= s.size() || !absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) return false;
  for (++i; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (absl::ascii_isxdigit(c)) continue;
    if (std::string_view("xXoO_.:+ tTzZ-").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool ReadsAsNonString(const std::string& s) { return s.empty() || IsWord(s) || IsNumberLike(s); }

// yaml-cpp 0.7 writes a literal block as `|` (clip) with no indentation indicator, which reads
// back right only for text that ends in exactly one newline, has no leading space (the first
// line would set a deeper indentation) and only printable characters and tabs.
bool FitsLiteralBlock(const std::string& s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.front() == ' ' || s.front() == '\n') return false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 && c != '\n' && c != '\t') return false;
    if (c == 0x7f) return false;
  }
  return true;
}

void EmitString(YAML::Emitter& out, const std::string& s) {
  if (absl::StrContains(s, '\n') && FitsLiteralBlock(s)) {
    out << YAML::Literal << s;  // configuration files in ConfigMaps stay readable
  } else if (ReadsAsNonString(s) || absl::StrContains(s, '\n')) {
    out << YAML::DoubleQuoted << s;
  } else {
    out << s;  // yaml-cpp quotes what cannot be plain (": ", leading "- ", "#", ...)
  }
}

void Emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;  // `{}` on the key's line
        break;
      }
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key;
        EmitString(out, it.key());
        out << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const json& item : v) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string:
      EmitString(out, v.get_ref<const std::string&>());
      break;
    case json::value_t::boolean:
      out << v.get<bool>();
      break;
    case json::value_t::number_integer:
      out << v.get<int64_t>();
      break;
    case json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      break;
    case json::value_t::number_float:
      // JSON's shortest round-trip form ("0.1", "1.0"), plain so it reads back as a number.
      out << v.dump();
      break;
    default:
      out << YAML::Null;
  }
}

}  // namespace

std::string ToYaml(const json& value) {
  YAML::Emitter out;
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string RenderYaml(const std::vector<Child>& children) {
  std::string text;
  for (const Child& c : children) text += "---\n" + ToYaml(c.object);
  return text;
}

}  // namespace neuron::op
