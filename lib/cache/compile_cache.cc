// Compile-cache scanning and node compatibility (see compile_cache.h).
#include "lib/cache/compile_cache.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/cache/absl_view.h"
#include "lib/cache/store_files.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kTargetFlag = "--target";
constexpr size_t kMaxFlagsBytes = 64 * 1024;
// MODULE_ directories sit one level below neuronxcc-<version>; a few levels of prefix allowed.
constexpr int kMaxScanDepth = 8;

bool IsTargetChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

std::optional<std::string> CleanTarget(absl::string_view value) {
  if (value.empty() || value.size() > 32) return std::nullopt;
  for (char c : value) {
    if (!IsTargetChar(c)) return std::nullopt;
  }
  return absl::AsciiStrToLower(value);
}

bool IsRegularFile(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

void ScanModule(const fs::path& dir, CompileCacheSummary& out) {
  if (!IsRegularFile(dir / "model.neff")) return;
  ++out.modules;
  const fs::path flags = dir / "compile_flags.txt";
  if (!IsRegularFile(flags)) return;
  absl::StatusOr<std::string> text = ReadSmallFile(flags.string(), kMaxFlagsBytes);
  if (!text.ok()) return;  // an unreadable flags file names no target
  if (std::optional<std::string> target = ParseCompileTarget(*text)) out.targets.insert(*target);
}

}  // namespace

std::optional<std::string> ParseCompileTarget(std::string_view compile_flags_text) {
  std::vector<absl::string_view> tokens =
      absl::StrSplit(Sv(compile_flags_text), absl::ByAnyChar(" \t\r\n[],'\""), absl::SkipEmpty());
  std::optional<std::string> target;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const absl::string_view t = tokens[i];
    if (t == kTargetFlag) {
      if (i + 1 < tokens.size()) {
        if (auto v = CleanTarget(tokens[i + 1])) target = v;
      }
    } else if (absl::StartsWith(t, kTargetFlag) && t.size() > kTargetFlag.size() &&
               t[kTargetFlag.size()] == '=') {
      if (auto v = CleanTarget(t.substr(kTargetFlag.size() + 1))) target = v;
    }
  }
  return target;
}

absl::StatusOr<CompileCacheSummary> ScanCompileCache(const std::string& root) {
  std::error_code ec;
  if (fs::symlink_status(root, ec).type() != fs::file_type::directory) {
    return absl::NotFoundError(absl::StrCat("compile cache ", root, ": not a directory"));
  }
  CompileCacheSummary out;
  // The default options do not follow directory symlinks.
  fs::recursive_directory_iterator it(root, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it->symlink_status(ec).type() != fs::file_type::directory) continue;
    if (absl::StartsWith(it->path().filename().string(), "MODULE_")) {
      ScanModule(it->path(), out);
      it.disable_recursion_pending();
    } else if (it.depth() >= kMaxScanDepth) {
      it.disable_recursion_pending();
    }
  }
  if (ec) return absl::UnavailableError(absl::StrCat("scan ", root, ": ", ec.message()));
  return out;
}

std::optional<std::string> CompilerTargetFor(topology::Family family) {
  switch (family) {
    case topology::Family::kInferentia2:
      return "inf2";
    case topology::Family::kTrainium:
      return "trn1";
    case topology::Family::kTrainium2:
      return "trn2";
    case topology::Family::kTrainium3:
      return "trn3";
    case topology::Family::kInferentia:
      return std::nullopt;
  }
  return std::nullopt;
}

absl::Status CheckCompatible(const CompileCacheSummary& summary, topology::Family family) {
  const std::optional<std::string> node = CompilerTargetFor(family);
  std::vector<std::string> foreign;
  for (const std::string& t : summary.targets) {
    if (!node || t != *node) foreign.push_back(t);
  }
  if (foreign.empty()) return absl::OkStatus();
  const std::string node_text = node ? absl::StrCat("target ", *node)
                                     : std::string("no neuronx-cc target (inf1 uses neuron-cc)");
  return absl::FailedPreconditionError(
      absl::StrCat("cache compiled for ", absl::StrJoin(foreign, ", "), "; this ",
                   topology::FamilyName(family), " node needs ", node_text));
}

std::string NeffPath(std::string_view root, std::string_view compiler_version,
                     std::string_view graph_hash, std::string_view flags_hash) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  const absl::string_view version = Sv(compiler_version);
  const absl::string_view prefix = absl::StartsWith(version, "neuronxcc-") ? "" : "neuronxcc-";
  return absl::StrCat(Sv(root), "/", prefix, version, "/MODULE_", Sv(graph_hash), "+",
                      Sv(flags_hash), "/model.neff");
}

}  // namespace neuron::cache
