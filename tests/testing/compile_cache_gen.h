// File: tests/testing/compile_cache_gen.h
// Writes a Neuron compiler cache directory as neuronx-cc lays it out
// (neuronxcc-<version>/MODULE_<graph hash>+<flags hash>/ with model.neff, model.hlo_module.pb and
// compile_flags.txt), for tests, the demo and the benches. Contents are deterministic from the
// module index, so a reader can check what it got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace neuron::testing {

struct CompileCacheSpec {
  std::string compiler_version = "2.21.18209.0+043b1bf7";
  std::string target = "trn2";  // --target in compile_flags.txt; "" = no target flag
  int modules = 3;
  uint64_t neff_bytes = 4096;  // per module
};

struct GeneratedModule {
  std::string graph_hash;
  std::string flags_hash;
  std::string neff_contents_prefix;  // the first bytes of its model.neff
};

// Writes the cache under `root` (created). Returns the modules written.
absl::Status WriteCompileCache(const std::string& root, const CompileCacheSpec& spec,
                               std::vector<GeneratedModule>* modules = nullptr);

// The graph and flags hashes of module `i` (what the compiler would compute from the HLO).
GeneratedModule ModuleNames(int i);

}  // namespace neuron::testing
