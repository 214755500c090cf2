#include "lib/base/flags.h"

#include <cstdlib>

#include "catch2/catch.hpp"

namespace neuron {
namespace {

struct Parsed {
  std::string root = "/";
  std::string node;
  int port = 8000;
  bool json = false;
  absl::Duration interval = absl::Seconds(5);
};

absl::Status ParseInto(Parsed& p, const std::vector<std::string>& args, bool* help) {
  FlagSet flags("prog", "Does things.");
  flags.String("host-root", &p.root, "Host root.");
  flags.String("node-name", &p.node, "Node name.", "NEURON_TEST_NODE_NAME");
  flags.Int("port", &p.port, "Port.");
  flags.Bool("log-json", &p.json, "JSON logs.");
  flags.Duration("interval", &p.interval, "Scan interval.");
  return flags.ParseArgs(args, help);
}

TEST_CASE("FlagSet parses both spellings, bools and durations", "[base][flags]") {
  Parsed p;
  bool help = true;
  REQUIRE(ParseInto(p,
                    {"--host-root=/host", "--node_name", "n1", "--port=9", "--log-json",
                     "--interval=250ms"},
                    &help)
              .ok());
  CHECK_FALSE(help);
  CHECK(p.root == "/host");
  CHECK(p.node == "n1");
  CHECK(p.port == 9);
  CHECK(p.json);
  CHECK(p.interval == absl::Milliseconds(250));
  Parsed q;
  REQUIRE(ParseInto(q, {"--log-json", "--no-log-json"}, &help).ok());
  CHECK_FALSE(q.json);
}

TEST_CASE("FlagSet takes defaults from the environment, flags win", "[base][flags]") {
  setenv("NEURON_TEST_NODE_NAME", "from-env", 1);
  Parsed p;
  bool help = false;
  REQUIRE(ParseInto(p, {}, &help).ok());
  CHECK(p.node == "from-env");
  Parsed q;
  REQUIRE(ParseInto(q, {"--node-name=flag"}, &help).ok());
  CHECK(q.node == "flag");
  unsetenv("NEURON_TEST_NODE_NAME");
}

TEST_CASE("FlagSet reports bad input clearly", "[base][flags]") {
  Parsed p;
  bool help = false;
  auto err = [&](const std::vector<std::string>& args) {
    return std::string(ParseInto(p, args, &help).message());
  };
  CHECK(err({"--nope=1"}) == "unknown flag --nope (see --help)");
  CHECK(err({"--port=eighty"}) == "--port: \"eighty\" is not an integer");
  CHECK(err({"--interval=-1s"}).find("not a positive duration") != std::string::npos);
  CHECK(err({"--interval=soon"}).find("not a positive duration") != std::string::npos);
  CHECK(err({"stray"}).find("unexpected argument") != std::string::npos);
  CHECK(err({"--node-name"}) == "flag --node-name needs a value");
  CHECK(err({"--log-json=maybe"}).find("not true or false") != std::string::npos);
}

TEST_CASE("FlagSet --help lists every flag with its default and env", "[base][flags]") {
  Parsed p;
  bool help = false;
  REQUIRE(ParseInto(p, {"--port=1", "--help"}, &help).ok());
  CHECK(help);
  FlagSet flags("prog", "Does things.");
  flags.String("node-name", &p.node, "Node name.", "NODE_NAME");
  const std::string usage = flags.Usage();
  CHECK(usage.find("Usage: prog [flags]") != std::string::npos);
  CHECK(usage.find("--node-name=VALUE") != std::string::npos);
  CHECK(usage.find("env NODE_NAME") != std::string::npos);
}

}  // namespace
}  // namespace neuron
