// File: tests/operator/device_config_test_util.h
// The spec tests' shared pieces: the repository's sample DeviceConfigs as JSON, and the
// validation errors of an object with a lookup by field and message.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"
#include "lib/operator/yaml_input.h"
#include "nlohmann/json.hpp"

namespace neuron::op::spectest {

// The one YAML document in `rel` (a path from the repository root).
inline nlohmann::json LoadOne(const std::string& rel) {
  const char* root = std::getenv("NEURON_SOURCE_DIR");  // set by CTest; else run from the repo
  std::ifstream in(std::string(root != nullptr ? root : ".") + "/" + rel);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  auto docs = ParseYamlDocuments(text.str());
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return docs->front();
}

// deploy/operator/samples/<file>, one document.
inline nlohmann::json LoadSample(const std::string& file) {
  return LoadOne("deploy/operator/samples/" + file);
}

inline nlohmann::json Beta() { return LoadSample("deviceconfig-v1beta1.yaml"); }
inline nlohmann::json Alpha() { return LoadSample("deviceconfig-v1alpha1.yaml"); }

// What ValidateDeviceConfig finds in `obj` (which must parse).
inline std::vector<FieldError> Errors(const nlohmann::json& obj) {
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  return ValidateDeviceConfig(*dc);
}

// Whether some error names `field` with a message containing `text`.
inline bool Has(const std::vector<FieldError>& errors, const std::string& field,
                const std::string& text = "") {
  return std::any_of(errors.begin(), errors.end(), [&](const FieldError& e) {
    return e.field == field && absl::StrContains(e.message, text);
  });
}

}  // namespace neuron::op::spectest
