// File: lib/httpserver/http_server.h
// Our HTTP server: exact and prefix routes, our own Request/Response types, gzip for clients
// that take it. Used by every binary (/metrics, /healthz, the node agent's /inventory, the
// scheduler extender's protocol). It wraps cpp-httplib's server (issue 29: a maintained HTTP
// parser rather than our own). The types stay ours so that no other module includes httplib.h,
// and so that routing (one map lookup, not a regex per route) and compression (gzip at level 1,
// cached bodies, never brotli) stay under our control.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::httpserver {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  std::multimap<std::string, std::string> query;
  std::multimap<std::string, std::string> headers;  // names as the client sent them
  std::string body;
  std::string remote_addr;  // the peer, "ip:port"

  // The first value of query parameter `name`, or "" if absent.
  std::string QueryParam(const std::string& name) const;
  // The first value of header `name` (case-insensitive), or "" if absent.
  std::string Header(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::map<std::string, std::string> headers;
  // Optional: `body` already gzip-compressed (e.g. cached by the handler). Sent instead of
  // compressing `body` when the client accepts gzip.
  std::shared_ptr<const std::string> gzip_body;

  static Response Text(int status, std::string body);
  static Response Json(int status, std::string body);
};

using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  int threads = 4;  // connections served at once; more wait for a free thread
  // Bodies at least this large are gzip-compressed for clients that accept gzip.
  size_t gzip_min_bytes = 4096;
  size_t max_body_bytes = 8 << 20;  // larger requests get 413
  int read_timeout_seconds = 10;
  int write_timeout_seconds = 10;
  // Disable Nagle: httplib writes an answer's head and body apart, so a kept-alive peer may
  // otherwise wait ~40 ms (delayed ACK) for the body.
  bool tcp_nodelay = false;
  // Requests served on one kept-alive connection before it is closed; a low value makes a busy
  // client reconnect often (a new TCP handshake and worker hand-off).
  int keep_alive_max_requests = 5;
  // A kept-alive connection with no request for this long is closed. It holds one of the
  // threads meanwhile.
  int idle_timeout_seconds = 5;
};

// Splits "host:port" or "[v6]:port"; port may be 0 (pick a free one).
absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(const std::string& listen);

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options = {});
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Registers `handler` for an exact method and path; a path ending in "/*" matches that prefix
  // followed by one or more characters (e.g. "/debug/nodes/*"). Call before Start().
  void Handle(const std::string& method, const std::string& path, Handler handler);

  // Binds synchronously (so a port clash is reported here) and serves on background threads.
  absl::Status Start(const std::string& listen);
  // Stops accepting, finishes the requests being handled, closes idle kept-alive connections at
  // once. Idempotent.
  void Stop();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// /healthz answers 200 while the process serves; /readyz answers 200 only when ready() is true.
void AddHealthEndpoints(HttpServer& server, std::function<bool()> ready);

}  // namespace neuron::httpserver
