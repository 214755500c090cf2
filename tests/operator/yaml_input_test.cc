// File: tests/operator/yaml_input_test.cc
// The operator's YAML reader (render -f, the samples): YAML's types as JSON's, and hostile input
// refused. (The DeviceConfig rules themselves: device_config_rules_test.cc.)
#include "lib/operator/yaml_input.h"

#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;

TEST_CASE("YAML input keeps quoted scalars as strings and types plain ones", "[operator][spec]") {
  auto docs = ParseYamlDocuments(
      "a: \"true\"\nb: true\nc: 8000\nd: \"8000\"\ne: ~\nf: 1.5\ng: text\n---\n---\nx: [1, '2']\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  const json& d = (*docs)[0];
  CHECK(d["a"] == "true");
  CHECK(d["b"] == true);
  CHECK(d["c"] == 8000);
  CHECK(d["d"] == "8000");
  CHECK(d["e"].is_null());
  CHECK(d["f"] == 1.5);
  CHECK(d["g"] == "text");
  CHECK((*docs)[1]["x"] == json{1, "2"});
  CHECK_FALSE(ParseYamlDocuments("a: [unclosed\n").ok());
  CHECK_FALSE(ParseYamlDocuments(std::string(5000, '[')).ok());
  // Aliases that expand exponentially ("billion laughs") are refused, not expanded.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
              ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + "]\n";
  }
  CHECK_FALSE(ParseYamlDocuments(laughs).ok());
  // A ',' where a document would start stalls yaml-cpp 0.7's parser (it once took all memory):
  // refused with the place named. Documents before a good separator still parse.
  for (const std::string bad : {",", "{},", "\"x\",", "'x' ,", "[a],", "a: 1\n---\n{} ,\n"}) {
    CAPTURE(bad);
    auto r = ParseYamlDocuments(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("invalid YAML at line") != std::string_view::npos);
  }
  auto two = ParseYamlDocuments("{a: 1}\n---\n[2]\n...\n---\nb: c, d\n");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<json>{{{"a", 1}}, json{2}, {{"b", "c, d"}}});
}

}  // namespace
}  // namespace neuron::op
