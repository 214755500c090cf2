// Fuzz target for lib/ultraserver: the class attributes the driver prints, the node labels any
// client with node write access can set, and the --emulate-ultraserver flag. The first byte picks
// the parser. Besides "never crash", accepted values must be in range and label values safe.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "lib/ultraserver/emulation.h"
#include "lib/ultraserver/identity.h"
#include "lib/ultraserver/labels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace neuron::ultraserver;  // NOLINT(google-build-using-namespace): fuzz driver only
  switch (data[0] % 5) {
    case 0:
      if (auto v = ParseModes(text); v.ok()) {
        for (int m : *v) {
          if (m < 1 || m > 4) std::abort();
        }
      }
      break;
    case 1:
      if (auto v = ParseNodeId(text); v.ok() && (*v < -1 || *v > 63)) std::abort();
      break;
    case 2:
      if (auto v = ParseServerId(text); v.ok() && v->size() > 63) std::abort();
      break;
    case 3: {
      // Labels from arbitrary values: whatever reads back re-labels to valid values.
      const size_t cut = text.size() / 2;
      std::map<std::string, std::string> labels = {{kModeLabel, text.substr(0, cut)},
                                                   {ServerIdLabel(4), text.substr(cut)},
                                                   {NodeIdLabel(4), text.substr(cut, 2)}};
      if (auto id = IdentityFromLabels(labels)) {
        for (const auto& [k, v] : IdentityLabels(*id)) {
          if (v.empty() || v.size() > 63) std::abort();
        }
        if (auto m = id->MemberOf(4); m && (m->node_id < 0 || m->node_id > 3)) std::abort();
      }
      break;
    }
    default:
      if (auto n = ParseEmulatedNode(text); n.ok()) {
        if (n->node < 0 || n->node > 3 || n->modes.empty()) std::abort();
        (void)EmulatedClassAttributes(*n);
      }
      break;
  }
  return 0;
}
