// The server over real loopback sockets, with the bytes a client sends written by hand:
// keep-alive, chunked and 100-continue bodies, refusals, HEAD and 405, bodies passed as sent,
// the peer's address, and a Stop() that does not wait for idle clients.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/numbers.h"
#include "catch2/catch.hpp"
#include "lib/httpserver/http_server.h"

namespace neuron::httpserver {
namespace {

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval timeout{10, 0};  // a server that never answers fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

void SendAll(int fd, const std::string& bytes) {
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(bytes.size()));
}

// Everything the server sends until it closes the connection.
std::string ReadToClose(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// One answer, framed by its Content-Length; "" if the connection closes first.
std::string ReadAnswer(int fd) {
  std::string out;
  char buf[4096];
  size_t head_end = std::string::npos;
  size_t length = 0;
  while (head_end == std::string::npos || out.size() < head_end + length) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return "";
    out.append(buf, static_cast<size_t>(n));
    if (head_end != std::string::npos || (head_end = out.find("\r\n\r\n")) == std::string::npos) {
      continue;
    }
    head_end += 4;
    const size_t at = out.find("Content-Length: ");
    const size_t end = out.find("\r\n", at);
    if (at < head_end && !absl::SimpleAtoi(out.substr(at + 16, end - at - 16), &length)) return "";
  }
  return out;
}

std::string Exchange(int port, const std::string& bytes) {
  const int fd = Connect(port);
  SendAll(fd, bytes);
  return ReadToClose(fd);
}

struct EchoServer {
  HttpServer server;
  explicit EchoServer(ServerOptions options = {}) : server(options) {
    server.Handle("POST", "/echo", [](const Request& r) { return Response::Text(200, r.body); });
    server.Handle("GET", "/hello", [](const Request&) { return Response::Text(200, "hello"); });
    server.Handle("GET", "/peer",
                  [](const Request& r) { return Response::Text(200, r.remote_addr); });
    server.Handle("POST", "/type", [](const Request& r) {
      return Response::Text(
          200, r.Header("Content-Type") + "|" + r.Header("Content-Encoding") + "|" + r.body);
    });
    REQUIRE(server.Start("127.0.0.1:0").ok());
  }
  int port() const { return server.port(); }
};

TEST_CASE("one kept-alive connection serves requests until keep_alive_max_requests",
          "[httpserver]") {
  ServerOptions options;
  options.keep_alive_max_requests = 3;
  EchoServer s(options);
  const int fd = Connect(s.port());
  SendAll(fd, "POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\none");
  const std::string one = ReadAnswer(fd);
  CHECK(one.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(one.ends_with("\r\n\r\none"));
  CHECK(one.find("Connection: close") == std::string::npos);
  SendAll(fd, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(ReadAnswer(fd).ends_with("\r\n\r\nhello"));
  SendAll(fd, "GET /hello HTTP/1.1\r\n\r\n");
  const std::string third = ReadAnswer(fd);
  CHECK(third.ends_with("\r\n\r\nhello"));
  CHECK(third.find("Connection: close\r\n") != std::string::npos);
  CHECK(ReadToClose(fd).empty());  // the server closed it after the third
  // A client's Connection: close is honoured at once.
  const std::string closed = Exchange(s.port(), "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n");
  CHECK(closed.find("Connection: close\r\n") != std::string::npos);
  CHECK(closed.ends_with("\r\n\r\nhello"));
}

TEST_CASE("chunked and 100-continue bodies are read", "[httpserver]") {
  EchoServer s;
  CHECK(Exchange(s.port(),
                 "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                 "4\r\nchun\r\n3;x=y\r\nked\r\n0\r\n\r\n")
            .ends_with("\r\n\r\nchunked"));
  const int fd = Connect(s.port());
  SendAll(fd,
          "POST /echo HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n"
          "Connection: close\r\n\r\n");
  char buf[64] = {};
  REQUIRE(::recv(fd, buf, sizeof(buf) - 1, 0) > 0);
  CHECK(std::string(buf) == "HTTP/1.1 100 Continue\r\n\r\n");
  SendAll(fd, "body");
  const std::string out = ReadToClose(fd);
  CHECK(out.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(out.ends_with("\r\n\r\nbody"));
}

TEST_CASE("bodies are passed as sent: not inflated, not parsed as forms", "[httpserver]") {
  EchoServer s;
  CHECK(Exchange(s.port(),
                 "POST /type HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Type: x/y\r\n"
                 "Content-Length: 3\r\nConnection: close\r\n\r\nabc")
            .ends_with("\r\n\r\nx/y|gzip|abc"));
  CHECK(Exchange(s.port(),
                 "POST /type HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=z\r\n"
                 "Content-Length: 3\r\nConnection: close\r\n\r\nabc")
            .ends_with("\r\n\r\nmultipart/form-data; boundary=z||abc"));
  CHECK(Exchange(s.port(),
                 "POST /type HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 "Content-Length: 3\r\nConnection: close\r\n\r\na=b")
            .ends_with("\r\n\r\napplication/x-www-form-urlencoded||a=b"));
}

TEST_CASE("requests over the limits or malformed are refused", "[httpserver]") {
  ServerOptions options;
  options.max_body_bytes = 16;
  EchoServer s(options);
  CHECK(
      Exchange(s.port(), "POST /echo HTTP/1.1\r\nContent-Length: 17\r\nConnection: close\r\n\r\n" +
                             std::string(17, 'x'))
          .starts_with("HTTP/1.1 413 "));
  // A chunked body has no length up front: it is read to its end and dropped, so the
  // connection can carry the next request.
  const int fd = Connect(s.port());
  SendAll(fd, "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" +
                  std::string(32, 'x') + "\r\n0\r\n\r\n");
  CHECK(ReadAnswer(fd).starts_with("HTTP/1.1 413 "));
  SendAll(fd, "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n");
  CHECK(ReadToClose(fd).ends_with("\r\n\r\nhello"));
  // httplib answers these and keeps the connection for the idle timeout: read one answer.
  for (const std::string& bad :
       {std::string("GARBAGE\r\n\r\n"), std::string("GET /hello HTTP/3.0\r\n\r\n"),
        std::string("FOO /hello HTTP/1.1\r\n\r\n")}) {
    const int bad_fd = Connect(s.port());
    SendAll(bad_fd, bad);
    CHECK(ReadAnswer(bad_fd).starts_with("HTTP/1.1 400 Bad Request\r\n"));
    ::close(bad_fd);
  }
  const int long_fd = Connect(s.port());
  SendAll(long_fd, "GET /hello?" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n");
  CHECK(ReadAnswer(long_fd).starts_with("HTTP/1.1 414 "));
  ::close(long_fd);
  // Half a request and then silence: the connection is dropped, not the process.
  const int half = Connect(s.port());
  SendAll(half, "POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
  ::shutdown(half, SHUT_WR);
  CHECK(ReadToClose(half).empty());
}

TEST_CASE("HEAD is answered as GET without a body; a known path with another method is 405",
          "[httpserver]") {
  EchoServer s;
  const std::string head = Exchange(s.port(), "HEAD /hello HTTP/1.1\r\nConnection: close\r\n\r\n");
  CHECK(head.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(head.find("Content-Length: 5\r\n") != std::string::npos);
  CHECK(head.ends_with("\r\n\r\n"));
  const std::string wrong = Exchange(s.port(), "GET /echo HTTP/1.0\r\n\r\n");
  CHECK(wrong.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
  CHECK(wrong.find("Allow: POST\r\n") != std::string::npos);
}

TEST_CASE("the request names its peer as ip:port", "[httpserver]") {
  EchoServer s;
  const int fd = Connect(s.port());
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0);
  SendAll(fd, "GET /peer HTTP/1.1\r\nConnection: close\r\n\r\n");
  CHECK(ReadToClose(fd).ends_with("\r\n\r\n127.0.0.1:" + std::to_string(ntohs(local.sin_port))));
}

TEST_CASE("Stop does not wait for an idle kept-alive client", "[httpserver]") {
  ServerOptions options;
  options.idle_timeout_seconds = 3600;  // were Stop to wait for it, the test would time out
  EchoServer s(options);
  const int fd = Connect(s.port());
  SendAll(fd, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(ReadAnswer(fd).ends_with("hello"));
  const auto start = std::chrono::steady_clock::now();
  s.server.Stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(ReadToClose(fd).empty());  // the server closed it
}

}  // namespace
}  // namespace neuron::httpserver
