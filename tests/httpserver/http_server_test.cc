#include "lib/httpserver/http_server.h"

#include <stdexcept>

#include "catch2/catch.hpp"
#include "tests/testing/http_get.h"

namespace neuron::httpserver {
namespace {

using testing::HttpGet;
using testing::HttpPost;

TEST_CASE("ParseListenAddress accepts host:port and rejects garbage", "[httpserver]") {
  auto ok = ParseListenAddress("127.0.0.1:8000");
  REQUIRE(ok.ok());
  CHECK(ok->first == "127.0.0.1");
  CHECK(ok->second == 8000);
  auto any = ParseListenAddress(":9");
  REQUIRE(any.ok());
  CHECK(any->first == "0.0.0.0");
  auto v6 = ParseListenAddress("[::1]:0");
  REQUIRE(v6.ok());
  CHECK(v6->first == "::1");
  CHECK_FALSE(ParseListenAddress("8000").ok());
  CHECK_FALSE(ParseListenAddress("host:").ok());
  CHECK_FALSE(ParseListenAddress("host:http").ok());
  CHECK_FALSE(ParseListenAddress("host:70000").ok());
}

TEST_CASE("HttpServer routes exact paths with query and body", "[httpserver]") {
  HttpServer server;
  server.Handle("GET", "/echo.q", [](const Request& r) {
    return Response::Text(200, "q=" + r.QueryParam("q") + " missing=" + r.QueryParam("zz"));
  });
  server.Handle("POST", "/body", [](const Request& r) {
    return Response::Json(201, "{\"len\":" + std::to_string(r.body.size()) + ",\"ct\":\"" +
                                   r.Header("content-type") + "\"}");
  });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  REQUIRE(server.port() > 0);

  auto get = HttpGet(server.port(), "/echo.q?q=a%20b");
  CHECK(get.status == 200);
  CHECK(get.body == "q=a b missing=");
  // The dot is literal, not a regex wildcard.
  CHECK(HttpGet(server.port(), "/echoXq").status == 404);
  CHECK(HttpGet(server.port(), "/nothing").status == 404);

  auto post = HttpPost(server.port(), "/body", "12345", "application/json");
  CHECK(post.status == 201);
  CHECK(post.body == "{\"len\":5,\"ct\":\"application/json\"}");
  CHECK(post.content_type == "application/json");
  server.Stop();
  server.Stop();  // idempotent
  CHECK(HttpGet(server.port(), "/echo.q").status == -1);
}

TEST_CASE("HttpServer turns a throwing handler into a 500 and keeps serving", "[httpserver]") {
  HttpServer server;
  server.Handle("GET", "/boom",
                [](const Request&) -> Response { throw std::runtime_error("kaboom"); });
  server.Handle("GET", "/fine", [](const Request&) { return Response::Text(200, "fine"); });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  CHECK(HttpGet(server.port(), "/boom").status == 500);
  CHECK(HttpGet(server.port(), "/fine").body == "fine");
}

TEST_CASE("HttpServer rejects bodies over the limit with 413", "[httpserver]") {
  HttpServer server({.max_body_bytes = 1024});
  server.Handle("POST", "/p", [](const Request&) { return Response::Text(200, "ok"); });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  CHECK(HttpPost(server.port(), "/p", std::string(512, 'x')).status == 200);
  CHECK(HttpPost(server.port(), "/p", std::string(4096, 'x')).status == 413);
}

TEST_CASE("HttpServer reports a port clash at Start", "[httpserver]") {
  HttpServer first;
  REQUIRE(first.Start("127.0.0.1:0").ok());
  HttpServer second;
  const absl::Status clash = second.Start("127.0.0.1:" + std::to_string(first.port()));
  CHECK(clash.code() == absl::StatusCode::kUnavailable);
  CHECK(HttpServer().Start("nonsense").code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("health endpoints follow readiness", "[httpserver]") {
  HttpServer server;
  std::atomic<bool> ready{false};
  AddHealthEndpoints(server, [&] { return ready.load(); });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  CHECK(HttpGet(server.port(), "/healthz").status == 200);
  CHECK(HttpGet(server.port(), "/readyz").status == 503);
  ready = true;
  CHECK(HttpGet(server.port(), "/readyz").status == 200);
}

}  // namespace
}  // namespace neuron::httpserver
