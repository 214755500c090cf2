#include "lib/httpserver/http_server.h"

#include <zlib.h>

#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "lib/httpserver/gzip.h"
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

TEST_CASE("HttpServer routes prefixes, exact paths first, and answers 405 with Allow",
          "[httpserver]") {
  HttpServer server;
  server.Handle("GET", "/debug/nodes/*",
                [](const Request& r) { return Response::Text(200, "prefix " + r.path); });
  server.Handle("GET", "/debug/nodes/special",
                [](const Request&) { return Response::Text(200, "exact"); });
  server.Handle("POST", "/debug/nodes/special",
                [](const Request&) { return Response::Text(200, "posted"); });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  CHECK(HttpGet(server.port(), "/debug/nodes/n1").body == "prefix /debug/nodes/n1");
  CHECK(HttpGet(server.port(), "/debug/nodes/a/b").body == "prefix /debug/nodes/a/b");
  CHECK(HttpGet(server.port(), "/debug/nodes/special").body == "exact");
  CHECK(HttpPost(server.port(), "/debug/nodes/special", "").body == "posted");
  // The prefix needs at least one more character.
  CHECK(HttpGet(server.port(), "/debug/nodes/").status == 404);
  CHECK(HttpGet(server.port(), "/debug/nodes").status == 404);
  CHECK(HttpPost(server.port(), "/debug/nodes/n1", "").status == 405);
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

namespace neuron::httpserver {
namespace {

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  std::string out;
  char buf[16384];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "<corrupt>";
}

TEST_CASE("AcceptsGzip reads Accept-Encoding tokens and q=0", "[httpserver]") {
  CHECK(AcceptsGzip("gzip"));
  CHECK(AcceptsGzip("br, gzip;q=0.5, deflate"));
  CHECK(AcceptsGzip("GZIP"));
  CHECK(AcceptsGzip("*"));
  CHECK_FALSE(AcceptsGzip(""));
  CHECK_FALSE(AcceptsGzip("br"));
  CHECK_FALSE(AcceptsGzip("gzip;q=0"));
  CHECK_FALSE(AcceptsGzip("identity, gzip ; q=0.0"));
  CHECK_FALSE(AcceptsGzip("gzipper"));
}

TEST_CASE("GzipCompress round-trips", "[httpserver]") {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "neuron_core_flops_total{device=\"" + std::to_string(i) + "\"} 1\n";
  }
  const std::string gz = GzipCompress(text);
  CHECK(gz.size() < text.size() / 4);
  CHECK(Gunzip(gz) == text);
  CHECK(Gunzip(GzipCompress("")).empty());
}

TEST_CASE("GzipDecompress inflates what GzipCompress wrote and refuses anything else",
          "[httpserver]") {
  std::string text;
  for (int i = 0; i < 50000; ++i) absl::StrAppend(&text, "neuron_x{core=\"", i, "\"} 1\n");
  const std::string gz = GzipCompress(text);
  // Larger than the first 20:1 guess, so the output buffer grows along the way.
  auto back = GzipDecompress(gz);
  REQUIRE(back.ok());
  CHECK(*back == text);
  CHECK(GzipDecompress(GzipCompress(""))->empty());
  CHECK(absl::IsInvalidArgument(GzipDecompress("").status()));
  CHECK(absl::IsInvalidArgument(GzipDecompress("not gzip at all").status()));
  CHECK(absl::IsInvalidArgument(GzipDecompress(gz.substr(0, gz.size() / 2)).status()));
  CHECK(absl::IsInvalidArgument(GzipDecompress(gz + "x").status()));
  // A stream that would inflate past the limit is refused, not allocated.
  CHECK(absl::IsInvalidArgument(GzipDecompress(gz, text.size() - 1).status()));
  CHECK(GzipDecompress(gz, text.size()).ok());
}

TEST_CASE("large responses are gzipped for gzip clients only, never brotli", "[httpserver]") {
  const std::string big(20000, 'a');
  HttpServer server;
  server.Handle("GET", "/big", [&](const Request&) { return Response::Text(200, big); });
  server.Handle("GET", "/small", [](const Request&) { return Response::Text(200, "tiny"); });
  server.Handle("GET", "/cached", [&](const Request& r) {
    Response res = Response::Text(200, big);
    res.gzip_body = std::make_shared<const std::string>(GzipCompress(big));
    res.headers["X-Saw-Accept-Encoding"] = r.Header("Accept-Encoding");
    return res;
  });
  REQUIRE(server.Start("127.0.0.1:0").ok());
  auto gz = testing::HttpGetRaw(server.port(), "/big", {{"Accept-Encoding", "gzip"}});
  CHECK(gz.content_encoding == "gzip");
  CHECK(Gunzip(gz.body) == big);
  auto br = testing::HttpGetRaw(server.port(), "/big", {{"Accept-Encoding", "br"}});
  CHECK(br.content_encoding.empty());
  CHECK(br.body == big);
  auto both = testing::HttpGetRaw(server.port(), "/big", {{"Accept-Encoding", "br, gzip"}});
  CHECK(both.content_encoding == "gzip");
  auto small = testing::HttpGetRaw(server.port(), "/small", {{"Accept-Encoding", "gzip"}});
  CHECK(small.content_encoding.empty());
  CHECK(small.body == "tiny");
  auto cached = testing::HttpGetRaw(server.port(), "/cached", {{"Accept-Encoding", "gzip"}});
  CHECK(cached.content_encoding == "gzip");
  CHECK(Gunzip(cached.body) == big);
  auto plain = testing::HttpGetRaw(server.port(), "/cached", {});
  CHECK(plain.content_encoding.empty());
  CHECK(plain.body == big);
}

}  // namespace
}  // namespace neuron::httpserver
