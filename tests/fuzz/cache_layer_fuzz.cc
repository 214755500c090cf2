// Fuzz target for lib/cache's layer handling. The first byte picks the input, the rest is an
// entry name (NormalizeLayerPath, checked: the result is relative, free of "..", and a fixed
// point), "link\ntarget" for CheckSymlinkTarget and CanonicalSymlinkTarget (checked: ".." only
// leads), compile_flags.txt text for ParseCompileTarget, or a whole layer archive that ExtractLayer
// unpacks into a fresh temporary directory with small limits (checked: nothing appears beside that
// directory).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "lib/cache/compile_cache.h"
#include "lib/cache/layer_extractor.h"
#include "lib/cache/layer_path.h"

namespace {

namespace fs = std::filesystem;

void CheckNormalize(std::string_view input) {
  auto path = neuron::cache::NormalizeLayerPath(input);
  if (!path.ok()) return;
  if (path->empty() || path->front() == '/' ||
      ("/" + *path + "/").find("/../") != std::string::npos) {
    std::abort();
  }
  auto again = neuron::cache::NormalizeLayerPath(*path);
  if (!again.ok() || *again != *path) std::abort();
  (void)neuron::cache::ClassifyWhiteout(*path);
}

void CheckSymlink(std::string_view input) {
  const size_t nl = input.find('\n');
  if (nl == std::string_view::npos) return;
  auto link = neuron::cache::NormalizeLayerPath(input.substr(0, nl));
  if (!link.ok()) return;
  const std::string_view target = input.substr(nl + 1);
  if (!neuron::cache::CheckSymlinkTarget(*link, target).ok()) return;
  // What is written to disk is relative and climbs only at its start.
  const std::string canonical = neuron::cache::CanonicalSymlinkTarget(target);
  if (canonical.empty() || canonical.front() == '/') std::abort();
  bool named = false;
  size_t start = 0;
  while (start <= canonical.size()) {
    const size_t end = std::min(canonical.find('/', start), canonical.size());
    const std::string_view part(canonical.data() + start, end - start);
    if (part.empty() || (part == ".." && named)) std::abort();
    named = named || part != "..";
    start = end + 1;
  }
}

void Extract(std::string_view input) {
  char pattern[] = "/tmp/cache-layer-fuzz.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return;
  const std::string base = pattern;
  const std::string layer = base + "/layer";
  const std::string dest = base + "/dest";
  std::ofstream(layer, std::ios::binary) << input;
  fs::create_directory(dest);
  neuron::cache::ExtractLimits limits;
  limits.max_total_bytes = 1 << 20;
  limits.max_file_bytes = 256 << 10;
  limits.max_entries = 256;
  neuron::cache::ExtractStats stats;
  (void)neuron::cache::ExtractLayer(layer, dest, limits, stats);
  if (stats.bytes > limits.max_total_bytes || stats.entries > limits.max_entries + 1) std::abort();
  // The layer and the destination are all there may be beside each other.
  int beside = 0;
  std::error_code ec;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) ++beside;
  if (beside != 2) std::abort();
  fs::remove_all(base, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckNormalize(input);
      break;
    case 1:
      CheckSymlink(input);
      break;
    case 2:
      (void)neuron::cache::ParseCompileTarget(input);
      break;
    default:
      Extract(input);
      break;
  }
  return 0;
}
