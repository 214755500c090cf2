// File: tests/fakes/apiserver/selectors.h
// Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, != on dotted
// paths) as the `labelSelector` / `fieldSelector` query parameters spell them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

class LabelSelector {
 public:
  // Empty string = match everything. InvalidArgument on syntax errors.
  static absl::StatusOr<LabelSelector> Parse(const std::string& text);
  // A metav1.LabelSelector object ({matchLabels, matchExpressions}) as upstream's
  // LabelSelectorAsSelector reads it: {} matches everything; InvalidArgument for a non-object, an
  // unknown operator, or values that do not fit the operator (In/NotIn need some, Exists/
  // DoesNotExist none). A null selector matches nothing upstream: callers check for it first.
  static absl::StatusOr<LabelSelector> FromObject(const json& selector);
  // `labels` is metadata.labels (object or null).
  bool Matches(const json& labels) const;
  bool Empty() const { return reqs_.empty(); }

 private:
  enum class Op { kEq, kNotEq, kIn, kNotIn, kExists, kNotExists };
  struct Req {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  std::vector<Req> reqs_;
};

class FieldSelector {
 public:
  // `allowed` = field labels the resource supports besides metadata.name/metadata.namespace;
  // anything else is InvalidArgument "field label not supported: X" (upstream's 400 text).
  static absl::StatusOr<FieldSelector> Parse(const std::string& text,
                                             const std::vector<std::string>& allowed);
  bool Matches(const json& object) const;
  bool Empty() const { return reqs_.empty(); }

 private:
  struct Req {
    std::string field;
    bool negate;
    std::string value;
  };
  std::vector<Req> reqs_;
};

// Value of a dotted field path as a field selector sees it ("" when absent; bools as
// "true"/"false"; numbers printed).
std::string FieldValue(const json& object, const std::string& dotted);

}  // namespace neuron::fakes::apiserver
