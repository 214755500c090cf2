// Fuzz target: watch stream framing. The input is split into chunks at positions taken from its
// first bytes, fed to a WatchDecoder (pruning to a Pod's few fields when the first byte is odd,
// as the extender's watches do), and must yield events or an error, never a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/k8s/errors.h"
#include "lib/k8s/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t step = 1 + data[0] % 64;
  const std::string in(reinterpret_cast<const char*>(data + 1), size - 1);
  static const neuron::JsonKeep* keep = new neuron::JsonKeep(neuron::JsonKeep::Of(
      {{"metadata", neuron::JsonKeep::Of({{"name"}, {"resourceVersion"}})},
       {"spec", neuron::JsonKeep::Of({{"containers", neuron::JsonKeep::EachItem({})}})}}));
  neuron::k8s::WatchDecoder dec = data[0] % 2 == 1 ? neuron::k8s::WatchDecoder(*keep, 1 << 20)
                                                   : neuron::k8s::WatchDecoder(1 << 20);
  std::vector<neuron::k8s::WatchEvent> out;
  for (size_t i = 0; i < in.size(); i += step) {
    out.clear();
    const absl::string_view chunk(in.data() + i, std::min(step, in.size() - i));
    if (!dec.Feed(chunk, out).ok()) {
      break;
    }
    for (auto& ev : out) {
      if (ev.type == neuron::k8s::WatchEventType::kError) {
        (void)neuron::k8s::StatusFromWatchError(ev.object.dump());
      }
    }
  }
  return 0;
}
