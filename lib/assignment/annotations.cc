// File: lib/assignment/annotations.cc
#include "lib/assignment/annotations.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace neuron::assignment {
namespace {

const std::string* Find(const Annotations& a, const char* key) {
  auto it = a.find(key);
  return it == a.end() ? nullptr : &it->second;
}

}  // namespace

Annotations Format(const Assignment& a) {
  Annotations out = {{kAnnotationIds, FormatIdList(a.ids)},
                     {kAnnotationType, ShortName(a.kind)},
                     {kAnnotationAllocated, a.allocated ? "true" : "false"}};
  if (a.chosen_at_ns) out[kAnnotationAllocTime] = std::to_string(*a.chosen_at_ns);
  return out;
}

absl::StatusOr<Assignment> Parse(const Annotations& annotations) {
  const std::string* ids = Find(annotations, kAnnotationIds);
  if (ids == nullptr) return absl::NotFoundError(absl::StrCat("no ", kAnnotationIds));
  Assignment a;
  const std::string* type = Find(annotations, kAnnotationType);
  std::optional<ResourceKind> kind = ParseResourceKind(type ? *type : "");
  if (!kind) {
    return absl::InvalidArgumentError(absl::StrCat(kAnnotationType, " \"", type ? *type : "",
                                                   "\" is neither neuron nor neuroncore"));
  }
  a.kind = *kind;
  absl::StatusOr<std::vector<int>> list = ParseIdList(*ids);
  if (!list.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kAnnotationIds, " \"", *ids, "\": ", list.status().message()));
  }
  a.ids = *std::move(list);
  if (const std::string* allocated = Find(annotations, kAnnotationAllocated)) {
    if (*allocated != "true" && *allocated != "false") {
      return absl::InvalidArgumentError(
          absl::StrCat(kAnnotationAllocated, " \"", *allocated, "\" is neither true nor false"));
    }
    a.allocated = *allocated == "true";
  }
  int64_t at = 0;
  if (const std::string* t = Find(annotations, kAnnotationAllocTime);
      t && absl::SimpleAtoi(*t, &at)) {
    a.chosen_at_ns = at;
  }
  return a;
}

}  // namespace neuron::assignment
