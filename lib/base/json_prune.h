// File: lib/base/json_prune.h
// Parses only the parts of a JSON document a reader needs into a tree, passing over the rest
// with JsonScanner (validated, never built). A 2 KB Pod of which the extender reads a dozen
// fields costs a dozen small values instead of a few hundred allocations, which is most of
// what listing 50,000 pods costs.
//
// A JsonKeep describes what to keep, mirroring the document: members by exact name or by name
// prefix, array elements through `items`; a JsonKeep with none of those keeps its value whole.
// A value whose type does not match its JsonKeep (a string where an object was described) is
// kept whole, so the reader sees the same wrong type it would have seen in the full tree.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron {

struct JsonKeep {
  std::map<std::string, JsonKeep, std::less<>> members;
  std::vector<std::pair<std::string, JsonKeep>> prefixes;  // members whose name starts so
  std::shared_ptr<const JsonKeep> items;                   // each element of an array

  bool Whole() const { return members.empty() && prefixes.empty() && !items; }
  // Builders: JsonKeep::Of({{"metadata", JsonKeep::Of({{"name", {}}})}}).
  static JsonKeep Of(std::map<std::string, JsonKeep, std::less<>> m) {
    JsonKeep k;
    k.members = std::move(m);
    return k;
  }
  static JsonKeep EachItem(JsonKeep item) {
    JsonKeep k;
    k.items = std::make_shared<const JsonKeep>(std::move(item));
    return k;
  }
};

// `text` pruned to `keep`. InvalidArgument (with the byte offset) if `text` is not one valid
// JSON value, or nests deeper than `max_depth`.
absl::StatusOr<nlohmann::json> ParsePruned(std::string_view text, const JsonKeep& keep,
                                           int max_depth = 128);

}  // namespace neuron
