// File: tests/operator/render_test.cc
// RenderYaml: every child set reads back as the same JSON, and strings that some YAML reader
// would type otherwise (numbers, YAML 1.1 booleans, dates) stay quoted strings.
#include "lib/operator/render.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "tests/operator/children_test_util.h"
#include "yaml-cpp/yaml.h"

namespace neuron::op {
namespace {

using nlohmann::json;

TEST_CASE("rendered children read back as the same objects", "[operator][render]") {
  for (const childtest::Variant& v : childtest::Variants()) {
    const std::vector<Child> children = DesiredChildren(v.dc, v.apis, {});
    const std::string text = RenderYaml(children);
    auto docs = ParseYamlDocuments(text);
    REQUIRE(docs.ok());
    REQUIRE(docs->size() == children.size());
    for (size_t i = 0; i < children.size(); ++i) {
      CAPTURE(v.golden, i);
      CHECK((*docs)[i] == children[i].object);
    }
    CHECK(text.rfind("---\n", 0) == 0);
  }
}

// Strings a plain scalar would turn into something else for yaml-cpp, the YAML 1.2 core schema
// or Go's YAML 1.1 reader (kubectl).
const std::vector<std::string> kMustQuote = {
    "",      "true",  "False",      "yes",  "No",   "on",    "OFF",  "y",    "n",    "~",
    "null",  "NULL",  "8000",       "-1",   "+3",   "1.0",   ".5",   "1e3",  "0x1F", "0o17",
    "0b101", "1_000", "2001-12-14", "1:30", ".inf", "-.Inf", ".NaN", "0755", "12345"};

// Strings that need quoting or a block for their own characters.
const std::vector<std::string> kAwkward = {"- dash",
                                           "a: b",
                                           "#hash",
                                           " lead",
                                           "trail ",
                                           "quote\"s",
                                           "single'q",
                                           "back\\slash",
                                           "[flow]",
                                           "{map}",
                                           "ümlaut",
                                           "tab\there",
                                           "*alias",
                                           "&anchor",
                                           "!tag",
                                           "%percent",
                                           "@at",
                                           "`tick",
                                           "|pipe",
                                           ">fold",
                                           "multi\nline\n",
                                           "no newline\nat end",
                                           "two\n\n",
                                           "\nleading newline\n",
                                           "  indented\nblock\n",
                                           "cr\r\nlf\n",
                                           "bell\a\n",
                                           "x: |\n  y\n"};

TEST_CASE("strings stay strings through the YAML", "[operator][render]") {
  json obj = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}};
  json data = json::object();
  int i = 0;
  for (const std::string& s : kMustQuote) data["k" + std::to_string(i++)] = s;
  for (const std::string& s : kAwkward) data["k" + std::to_string(i++)] = s;
  for (const std::string& s : kMustQuote) data[s + "-as-key"] = s;
  data["y"] = "a key YAML 1.1 reads as true";
  data["8000"] = "a key that looks like a number";
  obj["data"] = data;
  obj["numbers"] = {{"int", 12345}, {"negative", -7}, {"float", 0.1}, {"big", 1e300}};
  obj["other"] = {{"bool", false},
                  {"null", nullptr},
                  {"empty_map", json::object()},
                  {"empty_list", json::array()},
                  {"list", {"8000", 8000, true, "true"}}};
  const std::string text =
      RenderYaml({Child{{"", "v1", "configmaps", true}, obj, Component::kScheduler}});
  CAPTURE(text);
  auto docs = ParseYamlDocuments(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  CHECK(docs->front() == obj);
  // Quoted, not merely read back right by our own (YAML 1.2) reader: yaml-cpp tags a quoted
  // scalar "!", a plain one "?".
  const YAML::Node node = YAML::Load(text.substr(4));
  for (size_t k = 0; k < kMustQuote.size(); ++k) {
    CAPTURE(kMustQuote[k]);
    CHECK(node["data"]["k" + std::to_string(k)].Tag() == "!");
  }
  CHECK(node["numbers"]["int"].Tag() == "?");
  CHECK(node["other"]["bool"].Tag() == "?");
}

TEST_CASE("configuration files render as literal blocks", "[operator][render]") {
  const std::vector<Child> children = DesiredChildren(childtest::Sample(), {}, {});
  const std::string text = RenderYaml(children);
  CHECK(absl::StrContains(text, "neuron-scheduler-config.yaml: |\n"));
}

TEST_CASE("huge strings render and read back without recursing", "[operator][render]") {
  // Each shape once ran a std::regex (recursive per character in libstdc++) on the string.
  constexpr size_t kMiB = 1 << 20;
  const json obj = {{"digits", std::string(kMiB, '7')},
                    {"number-like", "1" + std::string(kMiB, ':')},
                    {"text", std::string(kMiB, 'x')},
                    {std::string(kMiB, '9'), "a huge key"}};
  const std::string text = ToYaml(obj);
  auto docs = ParseYamlDocuments(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  CHECK(docs->front() == obj);
  // Quoted where a reader would type them otherwise.
  CHECK(absl::StrContains(text, "digits: \"777"));
  CHECK(absl::StrContains(text, "text: xxx"));
}

}  // namespace
}  // namespace neuron::op
