#include "lib/httpserver/gzip.h"

#include <zlib.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neuron::httpserver {

std::string GzipCompress(const std::string& data, int level) {
  z_stream zs{};
  // windowBits 15 + 16 selects the gzip wrapper.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

bool AcceptsGzip(const std::string& accept_encoding) {
  for (absl::string_view item : absl::StrSplit(accept_encoding, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ';');
    const std::string coding = absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
    if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
    bool refused = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      std::string param = absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[i]));
      param.erase(std::remove(param.begin(), param.end(), ' '), param.end());
      if (param == "q=0" || param == "q=0.0" || param == "q=0.00" || param == "q=0.000") {
        refused = true;
      }
    }
    if (!refused) return true;
  }
  return false;
}

}  // namespace neuron::httpserver
