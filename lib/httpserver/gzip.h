// File: lib/httpserver/gzip.h
// gzip (RFC 1952) for HTTP response bodies: at level 1, never brotli (seconds of CPU for a
// large /metrics page), and our handlers can cache one compressed copy per change instead of
// compressing on every request.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::httpserver {

// Level 1 (fastest) by default: scrape latency matters more than a few percent of bytes.
std::string GzipCompress(const std::string& data, int level = 1);

// Inflates a gzip stream: serves a cached compressed page to a client that does not take gzip,
// so only the compressed copy need stay resident. InvalidArgument for a corrupt or truncated
// stream, or one that would inflate past max_size (a bomb is refused, not allocated).
absl::StatusOr<std::string> GzipDecompress(std::string_view data, size_t max_size = 64 << 20);

// True when an Accept-Encoding header value admits gzip (a "gzip" token without q=0).
bool AcceptsGzip(const std::string& accept_encoding);

}  // namespace neuron::httpserver
