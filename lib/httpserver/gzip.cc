#include "lib/httpserver/gzip.h"

#include <zlib.h>

#include <algorithm>

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

absl::StatusOr<std::string> GzipDecompress(std::string_view data, size_t max_size) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return absl::InternalError("inflateInit2");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  // Our pages compress about 20:1; start there and double, so a page takes few resizes.
  std::string out(std::min(max_size, std::max<size_t>(4096, data.size() * 20)), '\0');
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.total_out == out.size()) {
      if (out.size() >= max_size) break;
      out.resize(std::min(max_size, out.size() * 2));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
    zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
    rc = inflate(&zs, Z_NO_FLUSH);
  }
  const size_t produced = zs.total_out;
  const size_t consumed = zs.total_in;
  inflateEnd(&zs);
  if (rc == Z_OK) return absl::InvalidArgumentError("gzip body inflates past the size limit");
  if (rc != Z_STREAM_END) return absl::InvalidArgumentError("corrupt or truncated gzip body");
  if (consumed != data.size()) return absl::InvalidArgumentError("bytes after the gzip stream");
  out.resize(produced);
  return out;
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
