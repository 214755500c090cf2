#include "lib/httpserver/request_head.h"

#include <string>

#include "catch2/catch.hpp"

namespace neuron::httpserver {
namespace {

std::optional<RequestHead> Parse(const std::string& text, HeadError* error) {
  REQUIRE(FindHeadEnd(text) == text.size());
  return ParseRequestHead(text, error);
}

int Refusal(const std::string& text) {
  HeadError error{};
  const auto head = ParseRequestHead(text, &error);
  CHECK_FALSE(head.has_value());
  CHECK_FALSE(error.reason.empty());
  return head ? 0 : error.status;
}

TEST_CASE("FindHeadEnd finds the blank line or nothing", "[httpserver]") {
  CHECK(FindHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n") == std::string::npos);
  CHECK(FindHeadEnd("GET / HTTP/1.1\r\n\r\nbody") == 18);
}

TEST_CASE("a request head parses into method, decoded path and query, headers, framing",
          "[httpserver]") {
  HeadError error{};
  auto head = Parse(
      "POST /debug/nodes/ip%2D1?watch&name=a+b%21&x=%zz HTTP/1.1\r\n"
      "Host: h\r\nContent-Length: 42\r\nX-Pad:  spaced value \t\r\nAccept-Encoding: gzip\r\n\r\n",
      &error);
  REQUIRE(head.has_value());
  CHECK(head->method == "POST");
  CHECK(head->path == "/debug/nodes/ip-1");
  CHECK(head->query.find("watch")->second.empty());
  CHECK(head->query.find("name")->second == "a b!");
  CHECK(head->query.find("x")->second == "%zz");  // a malformed escape is kept as written
  CHECK(head->headers.find("X-Pad")->second == "spaced value");
  CHECK(head->content_length == 42);
  CHECK_FALSE(head->chunked);
  CHECK(head->keep_alive);
  CHECK(head->minor_version == 1);
}

TEST_CASE("connection persistence follows the version and the Connection header", "[httpserver]") {
  HeadError error{};
  CHECK_FALSE(Parse("GET / HTTP/1.0\r\n\r\n", &error)->keep_alive);
  CHECK(Parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &error)->keep_alive);
  CHECK_FALSE(Parse("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n", &error)->keep_alive);
  CHECK(Parse("GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", &error)->expect_continue);
}

TEST_CASE("absolute-form targets and leading empty lines are accepted", "[httpserver]") {
  HeadError error{};
  auto head = Parse("\r\nGET http://extender:8888/filter?a=1 HTTP/1.1\r\n\r\n", &error);
  REQUIRE(head.has_value());
  CHECK(head->path == "/filter");
  CHECK(head->query.count("a") == 1);
  CHECK(Parse("OPTIONS http://extender HTTP/1.1\r\n\r\n", &error)->path == "/");
}

TEST_CASE("malformed heads are refused with the status to answer", "[httpserver]") {
  CHECK(Refusal("GET /\r\n\r\n") == 400);
  CHECK(Refusal("GET  / HTTP/1.1\r\n\r\n") == 400);
  CHECK(Refusal("G(T / HTTP/1.1\r\n\r\n") == 400);
  CHECK(Refusal("GET nopath HTTP/1.1\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/2.0\r\n\r\n") == 505);
  CHECK(Refusal("GET / HTTX/1.1\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nNo colon\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nSpace : before colon\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n") == 400);
  CHECK(Refusal(std::string("GET / HTTP/1.1\r\nA: b\0c\r\n\r\n", 27)) == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n") == 400);
  CHECK(Refusal("GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n") == 501);
  CHECK(Refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n") ==
        400);
}

TEST_CASE("heads over the limits are refused with 431", "[httpserver]") {
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxHeaderFields; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  CHECK(Refusal(many + "\r\n") == 431);
  CHECK(Refusal("GET / HTTP/1.1\r\nX: " + std::string(kMaxHeadBytes, 'a') + "\r\n\r\n") == 431);
}

TEST_CASE("chunked bodies decode, wait for more, and refuse bad or oversized input",
          "[httpserver]") {
  std::string body;
  size_t consumed = 0;
  const std::string full = "5;name=v\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\nNEXT";
  REQUIRE(DecodeChunked(full, 100, &body, &consumed) == ChunkedState::kComplete);
  CHECK(body == "hello world");
  CHECK(full.substr(consumed) == "NEXT");
  for (size_t cut = 0; cut < full.size() - 4; ++cut) {
    CHECK(DecodeChunked(full.substr(0, cut), 100, &body, &consumed) == ChunkedState::kIncomplete);
  }
  CHECK(DecodeChunked("5\r\nhelloXX", 100, &body, &consumed) == ChunkedState::kInvalid);
  CHECK(DecodeChunked("zz\r\n", 100, &body, &consumed) == ChunkedState::kInvalid);
  CHECK(DecodeChunked("ffffffffffffffffff\r\n", 100, &body, &consumed) == ChunkedState::kInvalid);
  CHECK(DecodeChunked("b\r\nhello world\r\n0\r\n\r\n", 10, &body, &consumed) ==
        ChunkedState::kTooLarge);
}

}  // namespace
}  // namespace neuron::httpserver
