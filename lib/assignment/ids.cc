// File: lib/assignment/ids.cc
#include "lib/assignment/ids.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace neuron::assignment {

std::string ResourceName(ResourceKind kind) {
  return kind == ResourceKind::kDevice ? kNeuronResource : kNeuronCoreResource;
}

std::string ShortName(ResourceKind kind) {
  return kind == ResourceKind::kDevice ? "neuron" : "neuroncore";
}

std::optional<ResourceKind> ParseResourceKind(absl::string_view name) {
  if (name == "neuron" || name == kNeuronResource) return ResourceKind::kDevice;
  if (name == "neuroncore" || name == kNeuronCoreResource) return ResourceKind::kCore;
  return std::nullopt;
}

absl::StatusOr<std::vector<ResourceKind>> ParseResourceList(absl::string_view list) {
  std::vector<ResourceKind> out;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::optional<ResourceKind> kind = ParseResourceKind(item);
    if (!kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown resource \"", item, "\" (want neuron and/or neuroncore)"));
    }
    if (std::find(out.begin(), out.end(), *kind) == out.end()) out.push_back(*kind);
  }
  return out;
}

absl::StatusOr<int> ParseId(absl::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("empty ID");
  if (s.size() > 1 && s[0] == '0') {
    return absl::InvalidArgumentError(absl::StrCat("ID \"", s, "\" has a leading zero"));
  }
  int value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(absl::StrCat("ID \"", s, "\" is not a decimal index"));
    }
    value = value * 10 + (c - '0');
    if (value > kMaxId) {
      return absl::InvalidArgumentError(absl::StrCat("ID \"", s, "\" is out of range"));
    }
  }
  return value;
}

absl::StatusOr<std::vector<int>> ParseIdList(absl::string_view s) {
  std::vector<int> out;
  std::set<int> seen;
  auto add = [&](int id) -> absl::Status {
    if (!seen.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate ID ", id));
    }
    if (out.size() > static_cast<size_t>(kMaxId)) {
      return absl::InvalidArgumentError("too many IDs");
    }
    out.push_back(id);
    return absl::OkStatus();
  };
  if (absl::StripAsciiWhitespace(s).empty()) return absl::InvalidArgumentError("empty ID list");
  for (absl::string_view item : absl::StrSplit(s, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) return absl::InvalidArgumentError("empty item in ID list");
    size_t dash = item.find('-');
    if (dash == absl::string_view::npos) {
      absl::StatusOr<int> id = ParseId(item);
      if (!id.ok()) return id.status();
      if (absl::Status st = add(*id); !st.ok()) return st;
      continue;
    }
    absl::StatusOr<int> lo = ParseId(absl::StripAsciiWhitespace(item.substr(0, dash)));
    if (!lo.ok()) return lo.status();
    absl::StatusOr<int> hi = ParseId(absl::StripAsciiWhitespace(item.substr(dash + 1)));
    if (!hi.ok()) return hi.status();
    if (*hi < *lo) {
      return absl::InvalidArgumentError(absl::StrCat("reversed range \"", item, "\""));
    }
    for (int id = *lo; id <= *hi; ++id) {
      if (absl::Status st = add(id); !st.ok()) return st;
    }
  }
  return out;
}

std::string FormatIdList(const std::vector<int>& ids) { return absl::StrJoin(ids, ","); }

std::string FormatRanges(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, ids[i]);
    if (j > i) absl::StrAppend(&out, "-", ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace neuron::assignment
