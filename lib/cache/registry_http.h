// File: lib/cache/registry_http.h
// The HTTP(S) exchange under the registry client: one GET to one URL, the 2xx body streamed to a
// sink chunk by chunk, other bodies kept (bounded) for error messages. Transport failures become
// Unavailable with the reason a cluster admin can act on (refused, timed out, stalled, which
// certificate check failed). Keeps httplib.h out of every header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace neuron::cache {

struct HttpUrl {
  bool tls = true;
  std::string host_port;       // "host" or "host:port", as it appears in the URL
  std::string target;          // "/path?query"
  std::string Origin() const;  // "https://host:port"
};

// Absolute http(s) URLs, or a path ("/x") resolved against `base` (redirect Location headers).
absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url, const HttpUrl* base = nullptr);

struct HttpTransportOptions {
  std::string ca_file;  // extra PEM bundle trusted besides the system store; "" = system only
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration stall_timeout = absl::Seconds(30);
};

struct HttpRequest {
  HttpUrl url;
  std::string authorization;  // Authorization header value, or ""
  std::string accept;         // Accept header value, or ""
  // Receives each chunk of a 2xx body; a non-OK status stops the transfer and is returned.
  std::function<absl::Status(absl::string_view)> sink;
  // Without a sink the 2xx body is kept in memory up to this size (larger: InvalidArgument).
  size_t max_body = 4u << 20;
};

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string location;
  std::string www_authenticate;
  std::string docker_content_digest;
  std::string body;  // non-2xx bodies (first 64 KiB), and 2xx bodies when there is no sink
};

// GET with bodies never decompressed (digests are over the bytes served).
absl::StatusOr<HttpResponse> HttpGet(const HttpTransportOptions& opts, const HttpRequest& req);

}  // namespace neuron::cache
