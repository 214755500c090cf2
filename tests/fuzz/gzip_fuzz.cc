// Fuzz target for lib/httpserver/gzip.h: the first byte picks the input, the rest is either a
// gzip stream for GzipDecompress (with a small size cap, so bombs are exercised) or an
// Accept-Encoding value. Besides "never crash", checks that whatever inflates round-trips.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lib/httpserver/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  using neuron::httpserver::AcceptsGzip;
  using neuron::httpserver::GzipCompress;
  using neuron::httpserver::GzipDecompress;
  if (data[0] % 2 == 0) {
    constexpr size_t kCap = 1 << 16;
    auto text = GzipDecompress(input, kCap);
    if (text.ok()) {
      if (text->size() > kCap) std::abort();
      auto again = GzipDecompress(GzipCompress(*text), kCap);
      if (!again.ok() || *again != *text) std::abort();
    }
  } else {
    // Compressing the raw bytes always inflates back to them.
    auto back = GzipDecompress(GzipCompress(input));
    if (!back.ok() || *back != input) std::abort();
    (void)AcceptsGzip(input);
  }
  return 0;
}
