// Lexical checks on layer entry names and link targets (see layer_path.h).
#include "lib/cache/layer_path.h"

#include <algorithm>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/cache/absl_view.h"

namespace neuron::cache {
namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";
constexpr std::string_view kAufsPrefix = ".wh..wh.";

absl::Status Invalid(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("entry \"", absl::CHexEscape(Sv(name.substr(0, 256))), "\": ", Sv(why)));
}

}  // namespace

absl::StatusOr<std::string> NormalizeLayerPath(std::string_view name) {
  if (name.empty()) return Invalid(name, "empty name");
  if (name.find('\0') != std::string_view::npos) return Invalid(name, "name contains a NUL byte");
  if (name.size() > kMaxLayerPathLength) {
    return Invalid(name, absl::StrCat("name longer than ", kMaxLayerPathLength, " bytes"));
  }
  if (name.front() == '/') return Invalid(name, "absolute path");
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(Sv(name), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") return Invalid(name, "path contains \"..\"");
    if (part.size() > kMaxLayerNameLength) {
      return Invalid(name,
                     absl::StrCat("a component is longer than ", kMaxLayerNameLength, " bytes"));
    }
    parts.push_back(part);
  }
  if (parts.empty()) return std::string(".");
  return absl::StrJoin(parts, "/");
}

std::string_view LayerParent(std::string_view normalized) {
  const size_t slash = normalized.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return normalized.substr(0, slash);
}

absl::Status CheckSymlinkTarget(std::string_view link_path, std::string_view target) {
  if (target.empty()) return Invalid(link_path, "symlink with an empty target");
  if (target.find('\0') != std::string_view::npos) {
    return Invalid(link_path, "symlink target contains a NUL byte");
  }
  if (target.size() > kMaxLayerPathLength) return Invalid(link_path, "symlink target too long");
  if (target.front() == '/') {
    return Invalid(link_path, absl::StrCat("symlink to absolute path \"",
                                           absl::CHexEscape(Sv(target.substr(0, 256))), "\""));
  }
  // Depth of the link's directory below the root, then walk the target from there.
  int depth = 0;
  const std::string_view parent = LayerParent(link_path);
  if (parent != ".") depth = static_cast<int>(std::count(parent.begin(), parent.end(), '/')) + 1;
  for (absl::string_view part : absl::StrSplit(Sv(target), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    depth += part == ".." ? -1 : 1;
    if (depth < 0) {
      return Invalid(link_path,
                     absl::StrCat("symlink target \"", absl::CHexEscape(Sv(target.substr(0, 256))),
                                  "\" points outside the image"));
    }
  }
  return absl::OkStatus();
}

std::string CanonicalSymlinkTarget(std::string_view target) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(Sv(target), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else {
      parts.push_back(part);
    }
  }
  if (parts.empty()) return ".";
  return absl::StrJoin(parts, "/");
}

absl::StatusOr<Whiteout> ClassifyWhiteout(std::string_view normalized) {
  const size_t slash = normalized.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? normalized : normalized.substr(slash + 1);
  if (base.substr(0, kWhiteoutPrefix.size()) != kWhiteoutPrefix) return Whiteout{};
  const std::string dir(LayerParent(normalized));
  if (base == kOpaqueMarker) return Whiteout{WhiteoutKind::kOpaque, dir};
  if (base.substr(0, kAufsPrefix.size()) == kAufsPrefix) {
    return Whiteout{WhiteoutKind::kAufsMeta, ""};
  }
  const std::string_view hidden = base.substr(kWhiteoutPrefix.size());
  if (hidden.empty() || hidden == "." || hidden == "..") {
    return Invalid(normalized, "whiteout that names no file");
  }
  return Whiteout{WhiteoutKind::kRemove,
                  dir == "." ? std::string(hidden) : absl::StrCat(dir, "/", Sv(hidden))};
}

}  // namespace neuron::cache
