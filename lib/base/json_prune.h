// File: lib/base/json_prune.h
// Parses only the parts of a JSON document a reader needs into a tree, passing over the rest
// with simdjson's On-Demand API (never built; its structure checked, its scalars not read). A 2 KB
// Pod of which the extender reads a dozen fields costs a dozen small values instead of a few
// hundred allocations, which is most of what listing 50,000 pods costs.
//
// A JsonKeep describes what to keep, mirroring the document: object members by exact name or
// by name prefix, array elements through `items`; a JsonKeep with neither keeps its value
// whole. An AllBut keep turns this around for objects: members not listed are kept whole, and
// the listed ones are dropped (Member::Drop) or pruned as they say; a cache that wants all of
// an object but its bookkeeping (managedFields) says so with it. A value whose type does not
// match its JsonKeep (a string where an object was described) is kept whole, so the reader
// sees the same wrong type it would have seen in the full tree.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron {

struct JsonKeep {
  struct Member;
  std::vector<Member> members;
  std::shared_ptr<const JsonKeep> items;  // each element of an array
  bool others = false;                    // members not listed are kept whole (AllBut)

  bool Whole() const;
  // What to keep of the member `name`, or null if it is not kept.
  const JsonKeep* Find(std::string_view name) const;

  // Builders: JsonKeep::Of({{"metadata", JsonKeep::Of({{"name"}})}, Member::Prefix("x/")}).
  static JsonKeep Of(std::vector<Member> members);
  static JsonKeep EachItem(JsonKeep item);
  // Every member but those `members` drop; the others they name are pruned as they describe.
  static JsonKeep AllBut(std::vector<Member> members);
};

struct JsonKeep::Member {
  Member(std::string name, JsonKeep keep = {});
  // Every member whose name starts with `prefix`, each kept as `keep` describes.
  static Member Prefix(std::string prefix, JsonKeep keep = {});
  // The member `name` is not kept (meaningful inside AllBut).
  static Member Drop(std::string name);

  std::string name;
  std::shared_ptr<const JsonKeep> keep;  // null: dropped
  bool prefix = false;
};

// `text` pruned to `keep`. InvalidArgument (with the byte offset) if `text` is not one JSON
// value, if what is kept is not valid JSON, or if it nests deeper than `max_depth` (counted
// along what is kept; what is passed over costs no stack however deep it nests).
absl::StatusOr<nlohmann::json> ParsePruned(std::string_view text, const JsonKeep& keep,
                                           int max_depth = 128);

}  // namespace neuron
