// File: tests/fuzz/device_config_fuzz.cc
// DeviceConfig input as the operator meets it: YAML (render -f) or JSON (the API) of any shape.
// Parsing, validation and the children builders must never crash; a valid spec must render.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/operator/children.h"
#include "lib/operator/device_config.h"
#include "lib/operator/render.h"
#include "lib/operator/yaml_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<nlohmann::json> docs;
  if (auto yaml = neuron::op::ParseYamlDocuments(in); yaml.ok()) docs = *yaml;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_discarded()) docs.push_back(std::move(j));
  for (const nlohmann::json& doc : docs) {
    auto dc = neuron::op::ParseDeviceConfig(doc);
    if (!dc.ok()) continue;
    if (!neuron::op::ValidateDeviceConfig(*dc).empty()) continue;
    (void)neuron::op::RenderYaml(neuron::op::DesiredChildren(*dc, {}, {}));
  }
  return 0;
}
