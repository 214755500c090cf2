#include "lib/httpserver/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/httpserver/gzip.h"
#include "spdlog/spdlog.h"

namespace neuron::httpserver {

std::string Request::QueryParam(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

std::string Request::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

Response Response::Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", listen, "\" must be host:port, e.g. 0.0.0.0:8000"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  if (!absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", listen, "\" has an invalid port"));
  }
  if (host.empty()) host = "0.0.0.0";
  return std::make_pair(host, port);
}

namespace {
// Where the pre-routing handler parks Accept-Encoding; no client can send a name with ':'.
constexpr char kAcceptEncodingKey[] = ":accept-encoding";

bool Compressible(const std::string& content_type) {
  return content_type.rfind("text/", 0) == 0 || content_type.rfind("application/json", 0) == 0;
}
}  // namespace

struct HttpServer::Impl {
  ServerOptions options;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  int listen_fd = -1;  // the socket httplib binds, seen through its socket-options hook
};

namespace {
// Debian ships httplib as a compiled library whose listen backlog is fixed at 5 (defining
// CPPHTTPLIB_LISTEN_BACKLOG here changes nothing): a burst of connections, such as
// kube-scheduler binding many pods at once, overflows the accept queue and clients fail. Linux
// lets listen() on a listening socket set a new backlog, so we raise it after the bind.
constexpr int kListenBacklog = 512;
}  // namespace

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  const int threads = options.threads;
  impl_->server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl_->server.set_payload_max_length(options.max_body_bytes);
  impl_->server.set_tcp_nodelay(options.tcp_nodelay);
  impl_->server.set_keep_alive_max_count(static_cast<size_t>(options.keep_alive_max_requests));
  // httplib's default also sets SO_REUSEPORT, which lets a second process silently share our
  // port. Keep only SO_REUSEADDR (fast restarts), so a clash is an error at Start().
  impl_->server.set_socket_options([impl = impl_.get()](socket_t sock) {
    impl->listen_fd = sock;
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl_->server.set_read_timeout(options.read_timeout_seconds, 0);
  impl_->server.set_write_timeout(options.write_timeout_seconds, 0);
  // httplib compresses responses itself, preferring brotli when offered, on every request. We
  // hide Accept-Encoding from it (so it never compresses) and keep the value for our adapter,
  // which gzips at level 1 or serves a handler's cached gzip body. The request object is
  // httplib's own non-const local, so editing its headers here is well-defined.
  impl_->server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    auto& headers = const_cast<httplib::Request&>(req).headers;
    auto it = headers.find("Accept-Encoding");
    if (it != headers.end()) {
      std::string value = it->second;
      headers.erase(it);
      headers.emplace(kAcceptEncodingKey, std::move(value));
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A throwing handler must never take the process down: answer 500 and log it.
  impl_->server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, const std::exception_ptr& ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("http handler failed method={} path={} error={}", req.method, req.path, what);
        res.status = 500;
        res.set_content("internal error\n", "text/plain; charset=utf-8");
      });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(const std::string& method, const std::string& path, Handler handler) {
  const size_t gzip_min = impl_->options.gzip_min_bytes;
  auto adapt = [handler = std::move(handler), gzip_min](const httplib::Request& in,
                                                        httplib::Response& out) {
    Request req;
    req.method = in.method;
    req.path = in.path;
    req.query.insert(in.params.begin(), in.params.end());
    std::string accept_encoding;
    for (const auto& [key, value] : in.headers) {
      if (key == kAcceptEncodingKey) {
        accept_encoding = value;
        req.headers.emplace("Accept-Encoding", value);
      } else {
        req.headers.emplace(key, value);
      }
    }
    // Moved, not copied (a full-Nodes extender request is tens of MB): `in` is httplib's own
    // non-const local, and httplib does not read the body after the handler returns.
    req.body = std::move(const_cast<httplib::Request&>(in).body);
    Response res = handler(req);
    out.status = res.status;
    for (const auto& [key, value] : res.headers) out.set_header(key, value);
    const bool gzip = AcceptsGzip(accept_encoding);
    if (gzip && res.gzip_body) {
      out.set_header("Content-Encoding", "gzip");
      out.set_content(*res.gzip_body, res.content_type);
    } else if (gzip && res.body.size() >= gzip_min && Compressible(res.content_type)) {
      out.set_header("Content-Encoding", "gzip");
      out.set_content(GzipCompress(res.body), res.content_type);
    } else {
      out.set_content(std::move(res.body), res.content_type);
    }
    if (res.gzip_body || Compressible(res.content_type)) out.set_header("Vary", "Accept-Encoding");
  };
  // httplib routes are regular expressions: escape the path so it matches literally.
  std::string pattern;
  const bool prefix = path.size() >= 2 && path.compare(path.size() - 2, 2, "/*") == 0;
  for (char c : prefix ? path.substr(0, path.size() - 1) : path) {
    if (std::string_view(".[]{}()*+?^$|\\").find(c) != std::string_view::npos) pattern += '\\';
    pattern += c;
  }
  if (prefix) pattern += ".+";
  if (method == "GET") {
    impl_->server.Get(pattern, adapt);
  } else if (method == "POST") {
    impl_->server.Post(pattern, adapt);
  } else if (method == "PUT") {
    impl_->server.Put(pattern, adapt);
  } else if (method == "DELETE") {
    impl_->server.Delete(pattern, adapt);
  } else if (method == "PATCH") {
    impl_->server.Patch(pattern, adapt);
  }
}

absl::Status HttpServer::Start(const std::string& listen) {
  auto addr = ParseListenAddress(listen);
  if (!addr.ok()) return addr.status();
  const auto& [host, port] = *addr;
  if (port == 0) {
    impl_->port = impl_->server.bind_to_any_port(host);
  } else {
    impl_->port = impl_->server.bind_to_port(host, port) ? port : -1;
  }
  if (impl_->port <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen, ": address in use or not available"));
  }
  if (::listen(impl_->listen_fd, kListenBacklog) != 0) {
    spdlog::warn("http server: cannot raise the listen backlog to {}: {}", kListenBacklog,
                 std::strerror(errno));
  }
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs: wait for it so Stop() never hangs.
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  spdlog::info("http server listening address={}:{}", host, impl_->port);
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (impl_->thread.joinable()) {
    impl_->server.stop();
    impl_->thread.join();
  }
}

int HttpServer::port() const { return impl_->port; }

void AddHealthEndpoints(HttpServer& server, std::function<bool()> ready) {
  server.Handle("GET", "/healthz", [](const Request&) { return Response::Text(200, "ok\n"); });
  server.Handle("GET", "/readyz", [ready = std::move(ready)](const Request&) {
    return ready() ? Response::Text(200, "ok\n") : Response::Text(503, "not ready\n");
  });
}

}  // namespace neuron::httpserver
