#include "lib/httpserver/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/httpserver/connection.h"
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

struct HttpServer::Impl {
  struct Route {
    std::string method, path;  // path without the trailing '*' when `prefix`
    bool prefix = false;
    Handler handler;
  };

  ServerOptions options;
  std::vector<Route> routes;  // fixed once Start() runs
  int port = 0;
  int listen_fd = -1;
  int stop_fd = -1;  // an eventfd, readable from Stop() on
  std::atomic<bool> stopping{false};
  std::thread acceptor;
  std::vector<std::thread> workers;
  // std:: rather than absl: several workers wait at once, and TSan cannot see absl's
  // evaluation of one waiter's Condition on another thread (uninstrumented Debian Abseil).
  std::mutex mu;
  std::condition_variable work;
  std::deque<int> accepted;  // connections no worker has taken yet; guarded by mu
  bool closing = false;      // guarded by mu

  Response Route(const Request& req) const;
  void AcceptLoop();
  void WorkerLoop();
  ConnectionLimits Limits() const;
};

namespace {
// kube-scheduler binding many pods at once opens connections in bursts.
constexpr int kListenBacklog = 512;

bool PathMatches(const std::string& pattern, bool prefix, const std::string& path) {
  if (!prefix) return path == pattern;
  return path.size() > pattern.size() && path.compare(0, pattern.size(), pattern) == 0;
}

// A listening socket on the first address `host` resolves to that binds; -1 when none does.
int Listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR for fast restarts; never SO_REUSEPORT, which would let a second process
    // silently share our port instead of failing at Start().
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}
}  // namespace

Response HttpServer::Impl::Route(const Request& req) const {
  // HEAD is answered as GET; the connection drops the body.
  const std::string_view method =
      req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
  bool path_known = false;
  for (const auto& route : routes) {
    if (!PathMatches(route.path, route.prefix, req.path)) continue;
    path_known = true;
    if (route.method != method) continue;
    // A throwing handler must never take the process down: answer 500 and log it.
    try {
      return route.handler(req);
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
  for (const auto& route : routes) {
    if (PathMatches(route.path, route.prefix, req.path)) {
      absl::StrAppend(&allow, allow.empty() ? "" : ", ", route.method);
    }
  }
  r.headers["Allow"] = allow;
  return r;
}

ConnectionLimits HttpServer::Impl::Limits() const {
  ConnectionLimits limits;
  limits.max_body_bytes = options.max_body_bytes;
  limits.read_timeout_ms = options.read_timeout_seconds * 1000;
  limits.write_timeout_ms = options.write_timeout_seconds * 1000;
  limits.idle_timeout_ms = options.idle_timeout_seconds * 1000;
  limits.max_requests = std::max(1, options.keep_alive_max_requests);
  limits.gzip_min_bytes = options.gzip_min_bytes;
  return limits;
}

void HttpServer::Impl::AcceptLoop() {
  while (!stopping.load()) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN) != 0) continue;
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        spdlog::warn("http server: cannot accept: {}", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // no busy loop
      }
      continue;
    }
    if (options.tcp_nodelay) {
      const int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    }
    {
      std::lock_guard lock(mu);
      accepted.push_back(fd);
    }
    work.notify_one();
  }
}

void HttpServer::Impl::WorkerLoop() {
  const ConnectionLimits limits = Limits();
  const Dispatch dispatch = [this](const Request& req) { return Route(req); };
  while (true) {
    int fd = -1;
    {
      std::unique_lock lock(mu);
      work.wait(lock, [this] { return closing || !accepted.empty(); });
      if (accepted.empty()) return;  // closing, and nothing left to serve
      fd = accepted.front();
      accepted.pop_front();
    }
    ServeConnection(fd, stop_fd, limits, dispatch);
  }
}

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(const std::string& method, const std::string& path, Handler handler) {
  const bool prefix = path.size() >= 2 && path.compare(path.size() - 2, 2, "/*") == 0;
  impl_->routes.push_back(
      {method, prefix ? path.substr(0, path.size() - 1) : path, prefix, std::move(handler)});
}

absl::Status HttpServer::Start(const std::string& listen) {
  auto addr = ParseListenAddress(listen);
  if (!addr.ok()) return addr.status();
  const auto& [host, port] = *addr;
  impl_->listen_fd = Listen(host, port);
  if (impl_->listen_fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen, ": address in use or not available"));
  }
  impl_->port = BoundPort(impl_->listen_fd);
  impl_->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl_->stop_fd < 0) {
    ::close(impl_->listen_fd);
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->workers.emplace_back([impl = impl_.get()] { impl->WorkerLoop(); });
  }
  impl_->acceptor = std::thread([impl = impl_.get()] { impl->AcceptLoop(); });
  spdlog::info("http server listening address={}:{}", host, impl_->port);
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!impl_->acceptor.joinable()) return;
  impl_->stopping.store(true);
  const uint64_t one = 1;
  if (::write(impl_->stop_fd, &one, sizeof(one)) < 0) {
    spdlog::warn("http server: cannot signal stop: {}", std::strerror(errno));
  }
  impl_->acceptor.join();
  ::close(impl_->listen_fd);  // new connections are refused from here on
  {
    std::lock_guard lock(impl_->mu);
    // Connections accepted but not yet served get no answer: close them with the listener.
    for (int fd : impl_->accepted) ::close(fd);
    impl_->accepted.clear();
    impl_->closing = true;
  }
  impl_->work.notify_all();
  for (std::thread& worker : impl_->workers) worker.join();
  impl_->workers.clear();
  ::close(impl_->stop_fd);
}

int HttpServer::port() const { return impl_->port; }

void AddHealthEndpoints(HttpServer& server, std::function<bool()> ready) {
  server.Handle("GET", "/healthz", [](const Request&) { return Response::Text(200, "ok\n"); });
  server.Handle("GET", "/readyz", [ready = std::move(ready)](const Request&) {
    return ready() ? Response::Text(200, "ok\n") : Response::Text(503, "not ready\n");
  });
}

}  // namespace neuron::httpserver
