// File: lib/httpserver/gzip.h
// gzip (RFC 1952) for HTTP response bodies. The server compresses itself rather than letting
// cpp-httplib do it: httplib picks brotli whenever a client offers it (seconds of CPU for a
// large /metrics page) and recompresses on every request, while our handlers can cache one
// compressed copy per change.
#pragma once

#include <string>

namespace neuron::httpserver {

// Level 1 (fastest) by default: scrape latency matters more than a few percent of bytes.
std::string GzipCompress(const std::string& data, int level = 1);

// True when an Accept-Encoding header value admits gzip (a "gzip" token without q=0).
bool AcceptsGzip(const std::string& accept_encoding);

}  // namespace neuron::httpserver
