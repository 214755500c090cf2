// Fuzz target: the image parsers fed by users and registries (image references in NeuronCache
// objects, manifests and WWW-Authenticate headers from registries, pull secrets) must never
// crash, throw or accept what they then cannot print. The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/cache/digest.h"
#include "lib/cache/image_reference.h"
#include "lib/cache/oci_manifest.h"
#include "lib/cache/registry_auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto ref = neuron::cache::ParseImageReference(in);
      // What we accept must round-trip: the printed form parses to the same reference.
      if (ref.ok()) {
        auto again = neuron::cache::ParseImageReference(ref->ToString());
        if (!again.ok() || again->ToString() != ref->ToString()) std::abort();
      }
      break;
    }
    case 1: {
      // The content type is the part before the first newline, the body the rest.
      const size_t nl = in.find('\n');
      const std::string_view type = nl == std::string_view::npos ? "" : in.substr(0, nl);
      const std::string_view body = nl == std::string_view::npos ? in : in.substr(nl + 1);
      auto m = neuron::cache::ParseManifest(body, type);
      if (m.ok() && m->manifest.has_value() == m->index_choice.has_value()) std::abort();
      if (m.ok() && m->manifest) {
        for (const auto& l : m->manifest->layers) {
          if (!neuron::cache::IsValidDigest(l.digest)) std::abort();
        }
      }
      break;
    }
    case 2: {
      const size_t nl = in.find('\n');
      const std::string_view host = nl == std::string_view::npos ? "docker.io" : in.substr(0, nl);
      const std::string_view json = nl == std::string_view::npos ? in : in.substr(nl + 1);
      (void)neuron::cache::LookupDockerConfig(json, host);
      break;
    }
    default:
      (void)neuron::cache::ParseAuthChallenge(in);
      break;
  }
  return 0;
}
