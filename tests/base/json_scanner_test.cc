// File: tests/base/json_scanner_test.cc
#include "lib/base/json_scanner.h"

#include <catch2/catch.hpp>
#include <string>

#include "nlohmann/json.hpp"

namespace neuron {
namespace {

// Whole-document validity as the scanner sees it: one value, then only whitespace.
bool ScannerAccepts(std::string_view text) {
  JsonScanner s(text);
  return s.Skip() && s.AtEnd();
}

TEST_CASE("json scanner reads members and skips the rest", "[json_scanner]") {
  const std::string text =
      R"({"kind":"Pod", "metadata":{"name":"p\u00e9","labels":{"a":"b"}},
          "n": -42, "ok": true, "skip": [1, 2.5e3, {"x": null}, "s\"q"], "last": null})";
  JsonScanner s(text);
  REQUIRE(s.EnterObject());
  std::string_view key;
  std::string kind, name;
  int64_t n = 0;
  bool flag = false;
  std::string_view skipped;
  int members = 0;
  while (s.NextMember(&key)) {
    ++members;
    if (key == "kind") {
      REQUIRE(s.ReadString(&kind));
    } else if (key == "metadata") {
      REQUIRE(s.EnterObject());
      while (s.NextMember(&key)) {
        if (key == "name") {
          REQUIRE(s.ReadString(&name));
        } else {
          REQUIRE(s.Skip());
        }
      }
    } else if (key == "n") {
      REQUIRE(s.ReadInt64(&n));
    } else if (key == "ok") {
      REQUIRE(s.ReadBool(&flag));
    } else if (key == "skip") {
      REQUIRE(s.Skip(&skipped));
    } else {
      REQUIRE(s.ConsumeNull());
    }
  }
  REQUIRE(s.ok());
  CHECK(s.AtEnd());
  CHECK(members == 6);
  CHECK(kind == "Pod");
  CHECK(name == "p\xc3\xa9");
  CHECK(n == -42);
  CHECK(flag);
  CHECK(skipped == R"([1, 2.5e3, {"x": null}, "s\"q"])");
}

TEST_CASE("json scanner decodes escapes as Go does", "[json_scanner]") {
  auto decode = [](const std::string& text) {
    JsonScanner s(text);
    std::string out;
    REQUIRE(s.ReadString(&out));
    return out;
  };
  CHECK(decode(R"("a\n\t\\\/\"b")") == "a\n\t\\/\"b");
  CHECK(decode(R"("\ud83d\ude00")") == "\xf0\x9f\x98\x80");  // surrogate pair
  CHECK(decode(R"("\ud83dx")") == "\xef\xbf\xbdx");          // lone high -> U+FFFD
  CHECK(decode(R"("\ude00")") == "\xef\xbf\xbd");            // lone low -> U+FFFD
  CHECK(decode(R"("\ud83d\u0041")") ==
        "\xef\xbf\xbd"
        "A");  // unpaired, next decoded alone
}

TEST_CASE("json scanner integers follow int64", "[json_scanner]") {
  auto read = [](const std::string& text, int64_t* v) {
    JsonScanner s(text);
    return s.ReadInt64(v);
  };
  int64_t v = 0;
  CHECK(read("9223372036854775807", &v));
  CHECK(v == INT64_MAX);
  CHECK(read("-9223372036854775808", &v));
  CHECK(v == INT64_MIN);
  CHECK_FALSE(read("9223372036854775808", &v));
  CHECK_FALSE(read("99999999999999999999999", &v));
  CHECK_FALSE(read("1.0", &v));
  CHECK_FALSE(read("1e3", &v));
  CHECK_FALSE(read("\"1\"", &v));
  JsonScanner s("1.5");
  CHECK_FALSE(s.ReadInt64(&v));
  CHECK(std::string(s.error().message()).find("fraction") != std::string::npos);
}

TEST_CASE("json scanner agrees with a full parser on validity", "[json_scanner]") {
  const std::vector<std::string> docs = {"{}",
                                         "[]",
                                         "[1,2]",
                                         R"({"a":{"b":[true,false,null]}})",
                                         "0",
                                         "-0",
                                         "-0.5e+10",
                                         "\"\"",
                                         " [ 1 , { \"a\" : [ ] } ] ",
                                         "[1,]",
                                         "[,1]",
                                         "{\"a\":1,}",
                                         "{,}",
                                         "{\"a\"}",
                                         "{\"a\":}",
                                         "{1:2}",
                                         "[01]",
                                         "[1.]",
                                         "[.5]",
                                         "[1e]",
                                         "[-]",
                                         "[tru]",
                                         "[nul]",
                                         "[\"a]",
                                         "[\"\\x\"]",
                                         "[\"a\tb\"]",
                                         "{\"a\":1 \"b\":2}",
                                         "[1] [2]",
                                         "",
                                         "   ",
                                         "[",
                                         "]",
                                         "{\"a\":1",
                                         "[1,2",
                                         "\"\\u12\"",
                                         "\"\\u12G4\"",
                                         "[1 2]",
                                         "{\"a\" 1}",
                                         "nulll",
                                         "true false",
                                         "[-01]",
                                         "[+1]"};
  for (const std::string& d : docs) {
    INFO(d);
    CHECK(ScannerAccepts(d) == nlohmann::json::accept(d));
  }
}

TEST_CASE("json scanner refuses nesting past its limit without recursing", "[json_scanner]") {
  const std::string deep(100000, '[');
  JsonScanner s(deep);
  CHECK_FALSE(s.Skip());
  CHECK(std::string(s.error().message()).find("nested deeper than 128") != std::string::npos);
  const std::string ok = std::string(128, '[') + std::string(128, ']');
  CHECK(ScannerAccepts(ok));
  const std::string over = std::string(129, '[') + std::string(129, ']');
  CHECK_FALSE(ScannerAccepts(over));
}

TEST_CASE("json scanner errors are sticky and name the byte", "[json_scanner]") {
  JsonScanner s(R"({"a": [1, 2, oops]})");
  CHECK_FALSE(s.Skip());
  CHECK_FALSE(s.ok());
  CHECK(s.error().message() == "expected a JSON value at byte 13");
  std::string_view key;
  CHECK_FALSE(s.NextMember(&key));
  CHECK_FALSE(s.EnterArray());
  CHECK(s.error().message() == "expected a JSON value at byte 13");
}

TEST_CASE("json scanner reports type mismatches", "[json_scanner]") {
  std::string str;
  JsonScanner a("42");
  CHECK_FALSE(a.ReadString(&str));
  CHECK(a.error().message() == "expected a string at byte 0");
  JsonScanner b(R"({"a":1})");
  CHECK_FALSE(b.EnterArray());
  CHECK(b.error().message() == "expected an array at byte 0");
  JsonScanner c("[1]");
  REQUIRE(c.EnterArray());
  REQUIRE(c.NextItem());
  CHECK_FALSE(c.Fail("value out of range"));
  CHECK(c.error().message() == "value out of range at byte 1");
}

}  // namespace
}  // namespace neuron
