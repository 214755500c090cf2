// File: tests/fuzz/olm_bundle_fuzz.cc
// Install manifests as `neuron-operator bundle|catalog -f` reads them: YAML of any shape. The
// bundle and catalog makers must answer with files or an error, never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/operator/olm_bundle.h"
#include "lib/operator/yaml_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  auto docs = neuron::op::ParseYamlDocuments(in);
  if (!docs.ok()) return 0;
  neuron::op::BundleOptions opts;
  opts.version = "1.0.0";
  opts.operator_image = "registry.example/neuron-operator:1.0.0";
  opts.bundle_image = "registry.example/bundle:v1.0.0";
  (void)neuron::op::MakeBundle(*docs, opts);
  (void)neuron::op::MakeCatalog(*docs, opts, "registry.example/index:v1.0.0");
  return 0;
}
