// File: tests/fakes/apiserver/patch.cc
#include "tests/fakes/apiserver/patch.h"

#include <algorithm>
#include <set>

#include "yaml-cpp/yaml.h"

namespace neuron::fakes::apiserver {

json MergePatch(json target, const json& patch) {
  if (!patch.is_object()) return patch;
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.value().is_null()) {
      target.erase(it.key());
    } else {
      target[it.key()] =
          MergePatch(target.contains(it.key()) ? target[it.key()] : json(nullptr), it.value());
    }
  }
  return target;
}

absl::StatusOr<json> JsonPatch(const json& target, const json& patch) {
  if (!patch.is_array()) return absl::InvalidArgumentError("json patch must be an array");
  try {
    return target.patch(patch);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

namespace {

const std::set<std::string> kMergeByName = {
    "containers",       "initContainers", "ephemeralContainers", "env", "volumes", "volumeMounts",
    "imagePullSecrets", "ports",          "conditions"};

std::string MergeKeyFor(const std::string& field) {
  if (field == "ports") return "containerPort";
  if (field == "conditions") return "type";
  return "name";
}

json MergeList(json target, const json& patch, const std::string& key) {
  if (!target.is_array()) target = json::array();
  for (const json& el : patch) {
    if (!el.is_object() || !el.contains(key)) return patch;  // not a keyed list: replace
  }
  for (const json& el : patch) {
    auto it = std::find_if(target.begin(), target.end(), [&](const json& t) {
      return t.is_object() && t.contains(key) && t[key] == el[key];
    });
    const bool del = el.value("$patch", std::string()) == "delete";
    if (it != target.end()) {
      if (del) {
        target.erase(it);
      } else {
        *it = StrategicMergePatch(*it, el);
      }
    } else if (!del) {
      json clean = el;
      clean.erase("$patch");
      target.push_back(clean);
    }
  }
  return target;
}

}  // namespace

json StrategicMergePatch(json target, const json& patch) {
  if (!patch.is_object()) return patch;
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    if (!k.empty() && k[0] == '$') continue;  // directives we do not implement
    if (it.value().is_null()) {
      target.erase(k);
    } else if (it.value().is_array() && kMergeByName.count(k) != 0) {
      target[k] =
          MergeList(target.contains(k) ? target[k] : json::array(), it.value(), MergeKeyFor(k));
    } else {
      target[k] = StrategicMergePatch(target.contains(k) ? target[k] : json(nullptr), it.value());
    }
  }
  return target;
}

namespace {

json ScalarFromYaml(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;  // quoted
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  json num = json::parse(s, nullptr, false);
  if (!num.is_discarded() && num.is_number()) return num;
  return s;
}

json FromYaml(const YAML::Node& n, int depth) {
  if (depth > 200) throw YAML::Exception(YAML::Mark::null_mark(), "nesting too deep");
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = FromYaml(kv.second, depth + 1);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& el : n) a.push_back(FromYaml(el, depth + 1));
      return a;
    }
    case YAML::NodeType::Scalar:
      return ScalarFromYaml(n);
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<json> ParseJsonOrYaml(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded()) return j;
  try {
    json y = FromYaml(YAML::Load(body), 0);
    (void)y.dump();  // throws on invalid UTF-8, which JSON bodies cannot carry either
    return y;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(std::string("invalid YAML/JSON body: ") + e.what());
  }
}

}  // namespace neuron::fakes::apiserver
