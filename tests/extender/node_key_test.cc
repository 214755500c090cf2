#include "lib/extender/node_key.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "catch2/catch.hpp"

namespace neuron::extender {
namespace {

TEST_CASE("NodeKey keeps short names inline and long ones whole", "[extender]") {
  const std::string at_limit(NodeKey::kInline, 'a');
  const std::string over = at_limit + "b";
  for (const std::string& name : {std::string(), std::string("ip-10-0-1-2.ec2.internal"), at_limit,
                                  over, std::string(253, 'z')}) {
    const NodeKey key(name);
    CHECK(key.view() == name);
    CHECK(key.str() == name);
    CHECK(NodeKeyEq()(key, name));
    CHECK(NodeKeyHash()(key) == NodeKeyHash()(std::string_view(name)));
  }
  CHECK_FALSE(NodeKeyEq()(NodeKey(at_limit), over));
  CHECK_FALSE(NodeKeyEq()(NodeKey(over), at_limit));
}

TEST_CASE("a table keyed by NodeKey is found by any string type, long names included",
          "[extender]") {
  absl::flat_hash_map<NodeKey, int, NodeKeyHash, NodeKeyEq> table;
  const std::string long_name(80, 'n');
  table["short"] = 1;
  table[long_name] = 2;
  CHECK(table.find(std::string_view("short"))->second == 1);
  CHECK(table.find(std::string("short"))->second == 1);
  CHECK(table.find(long_name)->second == 2);
  CHECK(table.find(std::string_view(long_name).substr(1)) == table.end());
  table.erase(std::string("short"));
  CHECK(table.count(std::string_view("short")) == 0);
}

}  // namespace
}  // namespace neuron::extender
