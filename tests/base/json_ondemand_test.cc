// File: tests/base/json_ondemand_test.cc
// lib/base/json_ondemand.h: padding without copies, one parser per thread with nested and large
// documents, raw values, trailing data and errors that say where.
#include "lib/base/json_ondemand.h"

#include <catch2/catch.hpp>
#include <string>

namespace neuron {
namespace {

namespace od = simdjson::ondemand;
using nlohmann::json;

TEST_CASE("JsonInput views a padded string and copies an unpadded one", "[json_ondemand]") {
  std::string padded = R"({"a":1})";
  ReserveJsonPadding(padded);
  const JsonInput view(padded);
  CHECK(view.data() == padded.data());
  CHECK(view.size() == padded.size());
  std::string tight = R"({"a":1})";
  tight.shrink_to_fit();
  const JsonInput copy(std::string_view{tight});
  CHECK(copy.data() != tight.data());
  CHECK(std::string_view(copy.data(), copy.size()) == tight);
}

TEST_CASE("a parse inside another on one thread leaves the outer document intact",
          "[json_ondemand]") {
  const JsonInput outer_in(std::string_view(R"({"inner":"{\"x\":[1,2]}","after":42})"));
  JsonParser outer;
  od::document doc;
  REQUIRE(outer.Iterate(outer_in).get(doc) == simdjson::SUCCESS);
  std::string_view text;
  REQUIRE(doc["inner"].get_string().get(text) == simdjson::SUCCESS);
  {
    const JsonInput inner_in(text);
    JsonParser inner;
    od::document inner_doc;
    REQUIRE(inner.Iterate(inner_in).get(inner_doc) == simdjson::SUCCESS);
    json tree;
    REQUIRE(ReadJsonTree(inner_doc, 8, &tree) == simdjson::SUCCESS);
    CHECK(tree == json::parse(R"({"x":[1,2]})"));
  }
  int64_t after = 0;
  REQUIRE(doc["after"].get_int64().get(after) == simdjson::SUCCESS);
  CHECK(after == 42);
}

TEST_CASE("a large document, then a small one, on the thread's parser", "[json_ondemand]") {
  std::string big = "[";
  for (int i = 0; i < 600000; ++i) big += R"("0123456789",)";
  big += "1]";
  for (const std::string& text : {big, std::string("[1,2,3]")}) {
    const JsonInput in(text);
    JsonParser parser;
    od::document doc;
    REQUIRE(parser.Iterate(in).get(doc) == simdjson::SUCCESS);
    json tree;
    REQUIRE(ReadJsonTree(doc, 4, &tree) == simdjson::SUCCESS);
    CHECK(tree.back() == (text.size() > 100 ? 1 : 3));
  }
}

TEST_CASE("RawJson is a value's exact text; scalars are validated", "[json_ondemand]") {
  const JsonInput in(std::string_view(R"({"o":{"k":[1, 2]} ,"a":[ ],"n":-1.5e3 ,"s":"a\"b"})"));
  JsonParser parser;
  od::document doc;
  REQUIRE(parser.Iterate(in).get(doc) == simdjson::SUCCESS);
  std::string_view raw;
  for (const auto& [key, want] : std::initializer_list<std::pair<const char*, const char*>>{
           {"o", R"({"k":[1, 2]})"}, {"a", "[ ]"}, {"n", "-1.5e3"}, {"s", R"("a\"b")"}}) {
    INFO(key);
    REQUIRE(RawJson(doc[key], &raw) == simdjson::SUCCESS);
    CHECK(raw == want);
  }
  const JsonInput bad(std::string_view(R"({"t":tru})"));
  JsonParser p2;
  REQUIRE(p2.Iterate(bad).get(doc) == simdjson::SUCCESS);
  CHECK(RawJson(doc["t"], &raw) != simdjson::SUCCESS);
}

TEST_CASE("errors say where; trailing data and depth are errors", "[json_ondemand]") {
  const JsonInput in(std::string_view(R"({"a": 1, "b": "x"})"));
  JsonParser parser;
  od::document doc;
  REQUIRE(parser.Iterate(in).get(doc) == simdjson::SUCCESS);
  int64_t b = 0;
  const simdjson::error_code e = doc["b"].get_int64().get(b);
  REQUIRE(e == simdjson::INCORRECT_TYPE);
  const absl::Status s = JsonErrorAt("spec.b", e, doc, in);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::StartsWith("spec.b: "));

  const JsonInput trailing(std::string_view("[1] [2]"));
  REQUIRE(parser.Iterate(trailing).get(doc) == simdjson::SUCCESS);
  json tree;
  REQUIRE(ReadJsonTree(doc, 4, &tree) == simdjson::SUCCESS);
  CHECK(ExpectEnd(doc) == simdjson::TRAILING_CONTENT);

  const JsonInput deep(std::string_view("[[[[1]]]]"));
  REQUIRE(parser.Iterate(deep).get(doc) == simdjson::SUCCESS);
  CHECK(ReadJsonTree(doc, 3, &tree) == simdjson::DEPTH_ERROR);

  const JsonInput empty(std::string_view(""));
  const simdjson::error_code none = parser.Iterate(empty).get(doc);
  CHECK(none != simdjson::SUCCESS);
  CHECK_THAT(std::string(JsonError("list", none).message()), Catch::StartsWith("list: "));
}

}  // namespace
}  // namespace neuron
