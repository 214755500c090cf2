// The server's connection handling over real loopback sockets, with the bytes a client sends
// written by hand: keep-alive and pipelining, chunked and 100-continue bodies, refusals, HEAD
// and 405, and a Stop() that does not wait for idle clients.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

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

std::string Exchange(int port, const std::string& bytes) {
  const int fd = Connect(port);
  SendAll(fd, bytes);
  return ReadToClose(fd);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct EchoServer {
  HttpServer server;
  explicit EchoServer(ServerOptions options = {}) : server(options) {
    server.Handle("POST", "/echo", [](const Request& r) { return Response::Text(200, r.body); });
    server.Handle("GET", "/hello", [](const Request&) { return Response::Text(200, "hello"); });
    REQUIRE(server.Start("127.0.0.1:0").ok());
  }
  int port() const { return server.port(); }
};

TEST_CASE("pipelined requests on one kept-alive connection are answered in order", "[httpserver]") {
  EchoServer s;
  const std::string out =
      Exchange(s.port(),
               "POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\none"
               "GET /hello HTTP/1.1\r\n\r\n"
               "POST /echo HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nthree");
  CHECK(Count(out, "HTTP/1.1 200 OK\r\n") == 3);
  const size_t one = out.find("\r\n\r\none");
  const size_t hello = out.find("\r\n\r\nhello");
  const size_t three = out.find("\r\n\r\nthree");
  CHECK(one < hello);
  CHECK(hello < three);
  CHECK(three != std::string::npos);
  CHECK(Count(out, "Connection: keep-alive") == 2);
  CHECK(Count(out, "Connection: close") == 1);
}

TEST_CASE("a connection is closed after keep_alive_max_requests answers", "[httpserver]") {
  ServerOptions options;
  options.keep_alive_max_requests = 2;
  EchoServer s(options);
  std::string three;
  for (int i = 0; i < 3; ++i) three += "GET /hello HTTP/1.1\r\n\r\n";
  const std::string out = Exchange(s.port(), three);
  CHECK(Count(out, "HTTP/1.1 200 OK") == 2);
  CHECK(Count(out, "Connection: close") == 1);
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

TEST_CASE("bad requests get their status and the connection closes", "[httpserver]") {
  ServerOptions options;
  options.max_body_bytes = 16;
  EchoServer s(options);
  CHECK(Exchange(s.port(), "GARBAGE\r\n\r\nGET /hello HTTP/1.1\r\n\r\n")
            .starts_with("HTTP/1.1 400 Bad Request\r\n"));
  CHECK(Exchange(s.port(), "POST /echo HTTP/1.1\r\nContent-Length: 17\r\n\r\n")
            .starts_with("HTTP/1.1 413 "));
  CHECK(Exchange(s.port(),
                 "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "20\r\n" +
                     std::string(32, 'x') + "\r\n0\r\n\r\n")
            .starts_with("HTTP/1.1 413 "));
  CHECK(Exchange(s.port(), "GET / HTTP/1.1\r\nX: " + std::string(70000, 'a'))
            .starts_with("HTTP/1.1 431 "));
  CHECK(Exchange(s.port(), "GET /hello HTTP/3.0\r\n\r\n").starts_with("HTTP/1.1 505 "));
  // Half a request and then silence: the connection is dropped, not the process.
  const int fd = Connect(s.port());
  SendAll(fd, "POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
  ::shutdown(fd, SHUT_WR);
  CHECK(ReadToClose(fd).empty());
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

TEST_CASE("Stop does not wait for an idle kept-alive client", "[httpserver]") {
  ServerOptions options;
  options.idle_timeout_seconds = 3600;  // were Stop to wait for it, the test would time out
  EchoServer s(options);
  const int fd = Connect(s.port());
  SendAll(fd, "GET /hello HTTP/1.1\r\n\r\n");
  char buf[256];
  REQUIRE(::recv(fd, buf, sizeof(buf), 0) > 0);
  s.server.Stop();
  CHECK(ReadToClose(fd).empty());  // the server closed it
}

}  // namespace
}  // namespace neuron::httpserver
