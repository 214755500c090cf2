// File: tests/fuzz/apiserver_parsers_fuzz.cc
// Fuzzes the fake apiserver's parsers: label/field selectors, JSON-or-YAML bodies, the three
// JSON patch formats, and Kubernetes protobuf bodies ("k8s\0" + runtime.Unknown). Input: first
// byte picks the parser; for patches, the rest is "<target JSON>\n<patch JSON>".
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fakes/apiserver/patch.h"
#include "tests/fakes/apiserver/protobuf_body.h"
#include "tests/fakes/apiserver/selectors.h"

using neuron::fakes::apiserver::json;
namespace api = neuron::fakes::apiserver;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Parsed once: re-parsing it per input took a large share of each execution.
  static const json obj = json::parse(R"({"metadata":{"name":"a","labels":{"app":"x","k":"v"}},
                                          "spec":{"nodeName":"n1"},"status":{"phase":"Running"}})");
  switch (data[0] % 5) {
    case 0: {
      auto sel = api::LabelSelector::Parse(in);
      if (sel.ok()) (void)sel->Matches(obj["metadata"]["labels"]);
      break;
    }
    case 1: {
      auto sel = api::FieldSelector::Parse(in, {"spec.nodeName", "status.phase"});
      if (sel.ok()) (void)sel->Matches(obj);
      break;
    }
    case 2: {
      auto j = api::ParseJsonOrYaml(in);
      if (j.ok()) (void)j->dump(-1, ' ', false, json::error_handler_t::replace);
      break;
    }
    case 4: {
      auto j = api::DecodeProtobufObject(in);
      if (j.ok()) (void)j->dump(-1, ' ', false, json::error_handler_t::replace);
      break;
    }
    default: {
      const size_t nl = in.find('\n');
      if (nl == std::string::npos) return 0;
      json target = json::parse(in.substr(0, nl), nullptr, false);
      json patch = json::parse(in.substr(nl + 1), nullptr, false);
      if (target.is_discarded() || patch.is_discarded()) return 0;
      (void)api::MergePatch(target, patch);
      (void)api::StrategicMergePatch(target, patch);
      (void)api::JsonPatch(target, patch);
      break;
    }
  }
  return 0;
}
