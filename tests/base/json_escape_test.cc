// File: tests/base/json_escape_test.cc
#include "lib/base/json_escape.h"

#include <catch2/catch.hpp>
#include <string>

#include "nlohmann/json.hpp"

namespace neuron {
namespace {

std::string Quote(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

TEST_CASE("JSON strings are escaped as Go encodes them", "[json_escape]") {
  CHECK(Quote("ip-10-0-1-2.ec2.internal") == R"("ip-10-0-1-2.ec2.internal")");
  CHECK(Quote("a\"b\\c\nd\te\r") == R"("a\"b\\c\nd\te\r")");
  CHECK(Quote(std::string("\x01\x1f", 2)) == R"("\u0001\u001f")");
  CHECK(Quote("<a&b>") == R"("\u003ca\u0026b\u003e")");
  CHECK(Quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  CHECK(Quote("\xe2\x80\xa8") == R"("\u2028")");
  CHECK(Quote("") == R"("")");
}

TEST_CASE("invalid UTF-8 becomes U+FFFD per byte, so the output always parses", "[json_escape]") {
  CHECK(Quote("a\xff"
              "b") ==
        "\"a\xef\xbf\xbd"
        "b\"");
  CHECK(Quote("\xc0\xaf") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");                  // overlong '/'
  CHECK(Quote("\xed\xa0\x80") == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");  // surrogate
  CHECK(Quote("\xe2\x82") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");                  // truncated
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  const std::string quoted = Quote(all);
  REQUIRE(nlohmann::json::accept(quoted));
  const std::string back = nlohmann::json::parse(quoted).get<std::string>();
  CHECK(back.substr(0, 128) == all.substr(0, 128));  // ASCII comes back exactly
}

TEST_CASE("special bytes anywhere in a long run are escaped", "[base]") {
  const std::string specials = std::string("\"\\\x00\x01\x1f<>&\xff", 9);
  for (size_t at = 0; at < 24; ++at) {
    for (char c : specials) {
      std::string s(24, 'a');
      s[at] = c;
      const std::string quoted = Quote(s);
      CHECK(quoted.size() > s.size() + 2);  // every one of them is written escaped
      REQUIRE(nlohmann::json::accept(quoted));
    }
  }
}

}  // namespace
}  // namespace neuron
