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

// Plain scalars used to be typed with std::regex, which recurses per character in libstdc++:
// a 100 KB digit string crashed `neuron-operator render -f`. Every size reads, typed as before.
TEST_CASE("YAML input types huge plain scalars without recursing", "[operator][spec]") {
  constexpr size_t kMiB = 1 << 20;
  const std::string digits(kMiB, '7');
  auto docs = ParseYamlDocuments("a: " + digits + "\nb: -" + digits + "\nc: 0." + digits +
                                 "e-5\nd: " + digits + "x\ne: ." + digits + "\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  const json& d = docs->front();
  CHECK(d.at("a") == digits);  // beyond int64: the text, no digit lost
  CHECK(d.at("b") == "-" + digits);
  CHECK(d.at("c").is_number_float());
  CHECK(d.at("d") == digits + "x");
  CHECK(d.at("e").is_number_float());
  // The same scalar as a document of its own, and inside JSON (a YAML flow collection).
  auto alone = ParseYamlDocuments(digits);
  REQUIRE(alone.ok());
  CHECK(*alone == std::vector<json>{json(digits)});
  auto flow = ParseYamlDocuments("{\"spec\": [\"x\", " + digits + "]}");
  REQUIRE(flow.ok());
  CHECK(flow->front() == json{{"spec", {"x", digits}}});
  // The scanners accept what the expressions did.
  auto typed = ParseYamlDocuments(
      "[1, -2, +3, 1.5, .5, -.5, 5., 1e3, 1E-3, +1.5e+3, 1e, e1, 1.2.3, --1, +, ., 1_000, 0x1F]");
  REQUIRE(typed.ok());
  CHECK(typed->front() == json::parse(R"([1, -2, 3, 1.5, 0.5, -0.5, 5.0, 1000.0, 0.001, 1500.0,
      "1e", "e1", "1.2.3", "--1", "+", ".", "1_000", "0x1F"])"));
}

// Deep nesting, in block and flow YAML and in JSON: an error naming it, never a crash.
TEST_CASE("YAML input refuses deep nesting of every kind", "[operator][spec]") {
  constexpr size_t kLevels = 100'000;
  std::string block;  // "- - - ... - x": one block sequence per "- "
  for (size_t i = 0; i < kLevels; ++i) block += "- ";
  block += "x\n";
  std::string nested_map;  // "a:\n a:\n  a: ..." would be 5 GB; maps in flow style instead
  for (size_t i = 0; i < kLevels; ++i) nested_map += "{a: ";
  nested_map += "1";
  nested_map += std::string(kLevels, '}');
  std::string json_objects;
  for (size_t i = 0; i < kLevels; ++i) json_objects += "{\"a\":";
  json_objects += "1" + std::string(kLevels, '}');
  const std::vector<std::string> inputs = {
      std::string(kLevels, '['),
      std::string(kLevels, '[') + std::string(kLevels, ']'),
      block,
      nested_map,
      json_objects,
      "spec:\n  selector: " + std::string(kLevels, '[') + std::string(kLevels, ']') + "\n",
  };
  for (const std::string& in : inputs) {
    CAPTURE(in.substr(0, 20));
    auto r = ParseYamlDocuments(in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // Nesting within the limit still reads.
  auto ok = ParseYamlDocuments(std::string(100, '[') + std::string(100, ']'));
  REQUIRE(ok.ok());
}

}  // namespace
}  // namespace neuron::op
