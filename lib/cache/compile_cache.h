// What a Neuron compiler cache directory holds and whether a node can use it. Layout:
// <root>/neuronxcc-<version>/MODULE_<graph hash>+<flags hash>/ holding model.neff, the HLO
// (model.hlo_module.pb or model.hlo.pb) and compile_flags.txt, the flags it was compiled with.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/topology/device_model.h"

namespace neuron::cache {

// The --target of neuronx-cc flags ("--target=trn2", "--target trn1", one flag per line, or a
// Python-list-like "['--target=trn2', '-O1']"), lowercased; the last one wins, as in argparse.
// nullopt when no target is named.
std::optional<std::string> ParseCompileTarget(std::string_view compile_flags_text);

struct CompileCacheSummary {
  uint64_t modules = 0;  // MODULE_* directories holding a model.neff
  std::set<std::string> targets;
};

// Walks `root` (never following symlinks) for MODULE_* directories with a model.neff and reads
// their compile_flags.txt. NotFound when `root` is missing; Unavailable for I/O errors.
absl::StatusOr<CompileCacheSummary> ScanCompileCache(const std::string& root);

// The neuronx-cc target a node of this family runs: inf2, trn1, trn2, trn3; nullopt for
// Inferentia (inf1 runs neuron-cc, which does not use this cache).
std::optional<std::string> CompilerTargetFor(topology::Family family);

// OK when every target the cache names is the node's (a cache naming none is compatible);
// FailedPrecondition naming the targets otherwise.
absl::Status CheckCompatible(const CompileCacheSummary& summary, topology::Family family);

// Where the compiler looks for a module:
// <root>/neuronxcc-<version>/MODULE_<graph_hash>+<flags_hash>/model.neff.
std::string NeffPath(std::string_view root, std::string_view compiler_version,
                     std::string_view graph_hash, std::string_view flags_hash);

}  // namespace neuron::cache
