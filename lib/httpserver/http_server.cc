// File: lib/httpserver/http_server.cc
#include "lib/httpserver/http_server.h"

#include <dirent.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>
#include <unordered_map>
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
// Debian ships httplib as a compiled library whose listen backlog is fixed at 5 (defining
// CPPHTTPLIB_LISTEN_BACKLOG here changes nothing): a burst of connections, such as
// kube-scheduler binding many pods at once, overflows the accept queue and clients fail. Linux
// lets listen() on a listening socket set a new backlog, so we raise it after the bind.
constexpr int kListenBacklog = 512;

bool Compressible(const std::string& content_type) {
  return content_type.starts_with("text/") || content_type.starts_with("application/json");
}

// Moves the client's headers from httplib's request into ours without copying them. httplib
// reads two of them again after the handler: Accept-Encoding, which must be gone (it would
// compress on its own, brotli first), and Connection, which must stay (it names the answer's
// Connection header from it). Its REMOTE_ADDR-style entries are not the client's.
void TakeHeaders(httplib::Headers& from, std::multimap<std::string, std::string>& to) {
  for (const char* own : {"REMOTE_ADDR", "REMOTE_PORT", "LOCAL_ADDR", "LOCAL_PORT"}) {
    from.erase(own);
  }
  const auto connection = from.find("Connection");
  std::string keep = connection == from.end() ? "" : connection->second;
  to.merge(from);
  if (!keep.empty()) from.emplace("Connection", std::move(keep));
}

// Request::remote_addr: "ip:port", "[ip]:port" for IPv6 so the port stays readable.
std::string PeerAddress(const httplib::Request& in) {
  if (absl::StrContains(in.remote_addr, ':')) {
    return absl::StrCat("[", in.remote_addr, "]:", in.remote_port);
  }
  return absl::StrCat(in.remote_addr, ":", in.remote_port);
}

// Reads the body through httplib's reader as the client sent it: httplib neither inflates it
// (a gzip bomb would grow past any limit) nor parses a multipart form into its own fields, as
// it does not see Content-Type and Content-Encoding meanwhile. A chunked body over `max` is
// read to its end and dropped, so the connection stays in step (httplib checks only a
// Content-Length against the limit). Returns 0, or the status to refuse the request with.
int ReadBody(httplib::Request& in, const httplib::ContentReader& reader, size_t max,
             const httplib::Response& out, std::string* body) {
  httplib::Headers hidden;
  for (const char* name : {"Content-Type", "Content-Encoding"}) {
    for (auto it = in.headers.find(name); it != in.headers.end(); it = in.headers.find(name)) {
      hidden.insert(in.headers.extract(it));
    }
  }
  uint64_t length = 0;
  if (absl::SimpleAtoi(in.get_header_value("Content-Length"), &length) && length <= max) {
    body->reserve(length);
  }
  bool over = false;
  const bool read = reader([&](const char* data, size_t n) {
    if (!over && body->size() + n > max) {
      over = true;
      std::string().swap(*body);
    }
    if (!over) body->append(data, n);
    return true;
  });
  in.headers.merge(hidden);
  if (over || out.status == 413) return 413;
  return read ? 0 : 400;
}

// The port of `fd`'s local (or, with `peer`, remote) address; -1 if it has none.
int SocketPort(int fd, bool peer) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return -1;
}

// httplib checks for stop only between requests, so a kept-alive client that sends nothing
// would hold its worker, and Stop(), for the whole idle timeout. It does not tell us its
// connections: find those accepted on `port` among our descriptors and shut their read side.
// A connection waiting for a request then reads end-of-stream and closes; an answer being
// written still goes out (a request still arriving is cut short).
void ShutdownReads(int port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    spdlog::warn("http server: cannot list descriptors to close idle connections: {}",
                 std::strerror(errno));
    return;
  }
  while (const dirent* entry = ::readdir(dir)) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd == ::dirfd(dir)) continue;
    int type = 0;
    socklen_t len = sizeof(type);
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    if (SocketPort(fd, /*peer=*/false) == port && SocketPort(fd, /*peer=*/true) > 0) {
      ::shutdown(fd, SHUT_RD);
    }
  }
  ::closedir(dir);
}

struct Route {
  std::string method;
  Handler handler;
};
}  // namespace

struct HttpServer::Impl {
  ServerOptions options;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  int listen_fd = -1;  // the socket httplib binds, seen through its socket-options hook
  // Fixed once Start() runs; workers read them without a lock.
  std::unordered_map<std::string, std::vector<Route>> exact;
  std::vector<std::pair<std::string, Route>> prefixes;  // the prefix without its '*'

  // Calls `visit` with every route whose path matches, exact ones first; stops when it says.
  template <typename Visit>
  void Matching(const std::string& path, Visit visit) const;
  Response Dispatch(const Request& req) const;
  // `reader` is null for a request without a body.
  void Serve(httplib::Request& in, httplib::Response& out,
             const httplib::ContentReader* reader) const;
};

template <typename Visit>
void HttpServer::Impl::Matching(const std::string& path, Visit visit) const {
  if (auto it = exact.find(path); it != exact.end()) {
    for (const Route& route : it->second) {
      if (visit(route)) return;
    }
  }
  for (const auto& [prefix, route] : prefixes) {
    if (path.size() > prefix.size() && path.starts_with(prefix) && visit(route)) return;
  }
}

Response HttpServer::Impl::Dispatch(const Request& req) const {
  // HEAD is answered as GET; httplib leaves the body out.
  const std::string_view method =
      req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
  const Handler* handler = nullptr;
  bool path_known = false;
  Matching(req.path, [&](const Route& route) {
    path_known = true;
    if (route.method == method) handler = &route.handler;
    return handler != nullptr;
  });
  if (handler != nullptr) {
    // A throwing handler must never take the process down: answer 500 and log it.
    try {
      return (*handler)(req);
    } catch (const std::exception& e) {
      spdlog::error("http handler failed method={} path={} error={}", req.method, req.path,
                    e.what());
    } catch (...) {
      spdlog::error("http handler failed method={} path={} error=unknown exception", req.method,
                    req.path);
    }
    return Response::Text(500, "internal error\n");
  }
  if (!path_known) return Response::Text(404, "not found\n");
  Response r = Response::Text(405, "method not allowed\n");
  std::string allow;
  Matching(req.path, [&](const Route& route) {
    absl::StrAppend(&allow, allow.empty() ? "" : ", ", route.method);
    return false;
  });
  r.headers["Allow"] = allow;
  return r;
}

void HttpServer::Impl::Serve(httplib::Request& in, httplib::Response& out,
                             const httplib::ContentReader* reader) const {
  Request req;
  if (reader != nullptr) {
    if (const int refused = ReadBody(in, *reader, options.max_body_bytes, out, &req.body)) {
      out.status = refused;
      out.set_content(refused == 413
                          ? absl::StrCat("request body over ", options.max_body_bytes, " bytes\n")
                          : "request body not received whole\n",
                      "text/plain; charset=utf-8");
      return;
    }
  }
  req.method = in.method;
  req.path = in.path;
  req.remote_addr = PeerAddress(in);
  req.query = std::move(in.params);  // httplib does not read them after the handler
  TakeHeaders(in.headers, req.headers);
  in.ranges.clear();  // answers go out whole, as handlers wrote them
  Response res = Dispatch(req);

  out.status = res.status;
  for (const auto& [name, value] : res.headers) out.set_header(name, value);
  // Accept-Encoding is read only for an answer that could be compressed: the extender's never
  // is, and kube-scheduler offers gzip on every call.
  const bool compressible = Compressible(res.content_type);
  const bool could_gzip =
      res.gzip_body || (res.body.size() >= options.gzip_min_bytes && compressible);
  if (could_gzip && AcceptsGzip(req.Header("Accept-Encoding"))) {
    out.body = res.gzip_body ? *res.gzip_body : GzipCompress(res.body);
    out.set_header("Content-Encoding", "gzip");
  } else {
    out.body = std::move(res.body);
  }
  if (res.gzip_body || compressible) out.set_header("Vary", "Accept-Encoding");
  out.set_header("Content-Type", res.content_type);
}

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  httplib::Server& server = impl_->server;
  const int threads = std::max(1, options.threads);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_tcp_nodelay(options.tcp_nodelay);
  server.set_keep_alive_max_count(
      static_cast<size_t>(std::max(1, options.keep_alive_max_requests)));
  server.set_keep_alive_timeout(options.idle_timeout_seconds);
  server.set_read_timeout(options.read_timeout_seconds, 0);
  server.set_write_timeout(options.write_timeout_seconds, 0);
  // httplib's default also sets SO_REUSEPORT, which lets a second process silently share our
  // port. Keep only SO_REUSEADDR (fast restarts), so a clash is an error at Start().
  server.set_socket_options([impl = impl_.get()](socket_t sock) {
    impl->listen_fd = sock;
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // One catch-all per method, so httplib matches one regex per request (any path, '\n' too);
  // our map routes. Methods with a body get a content reader, so that we read the body. The
  // request is httplib's own non-const local, so taking its parts is well-defined.
  const std::string any = "[\\s\\S]*";
  const auto serve = [impl = impl_.get()](const httplib::Request& in, httplib::Response& out) {
    impl->Serve(const_cast<httplib::Request&>(in), out, nullptr);
  };
  const auto serve_body = [impl = impl_.get()](const httplib::Request& in, httplib::Response& out,
                                               const httplib::ContentReader& reader) {
    impl->Serve(const_cast<httplib::Request&>(in), out, &reader);
  };
  server.Get(any, serve).Options(any, serve).Delete(any, serve);  // DELETE without a body
  server.Post(any, serve_body).Put(any, serve_body).Patch(any, serve_body).Delete(any, serve_body);
  // Our own code throwing (handlers' exceptions are caught in Dispatch): answer 500, log it.
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, const std::exception_ptr& ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("http server failed method={} path={} error={}", req.method, req.path, what);
        res.status = 500;
        res.set_content("internal error\n", "text/plain; charset=utf-8");
      });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(const std::string& method, const std::string& path, Handler handler) {
  if (path.size() >= 2 && path.ends_with("/*")) {
    impl_->prefixes.push_back({path.substr(0, path.size() - 1), {method, std::move(handler)}});
  } else {
    impl_->exact[path].push_back({method, std::move(handler)});
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
  impl_->thread = std::thread([impl = impl_.get()] { impl->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs: wait for it so Stop() never hangs.
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  spdlog::info("http server listening address={}:{}", host, impl_->port);
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();  // closes the listener; no connection starts another request
  ShutdownReads(impl_->port);
  impl_->thread.join();  // httplib's thread pool finishes the requests in flight
}

int HttpServer::port() const { return impl_->port; }

void AddHealthEndpoints(HttpServer& server, std::function<bool()> ready) {
  server.Handle("GET", "/healthz", [](const Request&) { return Response::Text(200, "ok\n"); });
  server.Handle("GET", "/readyz", [ready = std::move(ready)](const Request&) {
    return ready() ? Response::Text(200, "ok\n") : Response::Text(503, "not ready\n");
  });
}

}  // namespace neuron::httpserver
