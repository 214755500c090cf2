// File: tests/testing/http_get.h
// Minimal loopback HTTP client for tests (real sockets via cpp-httplib).
#pragma once

#include <map>
#include <string>

namespace neuron::testing {

struct HttpResult {
  int status = -1;  // -1: connection failed
  std::string body;
  std::string content_type;
  std::string content_encoding;
  std::string error;  // when status is -1: what went wrong (httplib's error name)
};

// GET with extra request headers; the body is returned exactly as sent (not decompressed).
HttpResult HttpGetRaw(int port, const std::string& path,
                      const std::multimap<std::string, std::string>& headers);

HttpResult HttpGet(int port, const std::string& path);
HttpResult HttpPost(int port, const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json");

}  // namespace neuron::testing
