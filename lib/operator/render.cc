// File: lib/operator/render.cc
#include "lib/operator/render.h"

#include <regex>

#include "yaml-cpp/yaml.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// Plain scalars a YAML reader would type as null, bool or a number (YAML 1.2 core schema, plus
// the 1.1 booleans older parsers still apply): such strings must be quoted to stay strings.
bool ReadsAsNonString(const std::string& s) {
  static const std::regex kNumber(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o[0-7]+|"
      "[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
  static const std::regex kWord(
      "~|null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|"
      "ON|off|Off|OFF");
  return s.empty() || std::regex_match(s, kWord) || std::regex_match(s, kNumber);
}

void Emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& item : v) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.find('\n') != std::string::npos) {
        out << YAML::Literal << s;  // config files embedded in ConfigMaps stay readable
      } else {
        out << (ReadsAsNonString(s) ? YAML::DoubleQuoted : YAML::Auto) << s;
      }
      break;
    }
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
      out << v.get<double>();
      break;
    default:
      out << YAML::Null;
  }
}

}  // namespace

std::string RenderYaml(const std::vector<Child>& children) {
  std::string text;
  for (const Child& c : children) {
    YAML::Emitter out;
    Emit(out, c.object);
    text += "---\n";
    text += out.c_str();
    text += "\n";
  }
  return text;
}

}  // namespace neuron::op
