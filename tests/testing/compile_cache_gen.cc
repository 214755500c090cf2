// File: tests/testing/compile_cache_gen.cc
#include "tests/testing/compile_cache_gen.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace neuron::testing {
namespace {

absl::Status WriteFile(const std::filesystem::path& path, const std::string& prefix,
                       uint64_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  std::string block(1 << 20, '\0');
  // Not all zeros: gzip must do real work, as it does on real NEFFs.
  uint64_t x = std::hash<std::string>{}(prefix) | 1;
  for (size_t i = 0; i < block.size(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    block[i] = static_cast<char>(i % 4 == 0 ? (x & 0xff) : (i & 0x3f));
  }
  block.replace(0, std::min(prefix.size(), block.size()), prefix.substr(0, block.size()));
  for (uint64_t left = size; left > 0;) {
    const uint64_t n = std::min<uint64_t>(left, block.size());
    out.write(block.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
  return out.good() ? absl::OkStatus()
                    : absl::InternalError(absl::StrCat("short write ", path.string()));
}

}  // namespace

GeneratedModule ModuleNames(int i) {
  GeneratedModule m;
  m.graph_hash = absl::StrFormat("%020u", 11400714819323198485ull * static_cast<uint64_t>(i + 1));
  m.flags_hash = absl::StrFormat("%020u", 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(i));
  m.neff_contents_prefix = absl::StrCat("NEFF module ", i, " ", m.graph_hash);
  return m;
}

absl::Status WriteCompileCache(const std::string& root, const CompileCacheSpec& spec,
                               std::vector<GeneratedModule>* modules) {
  const std::filesystem::path base =
      std::filesystem::path(root) / absl::StrCat("neuronxcc-", spec.compiler_version);
  std::error_code ec;
  for (int i = 0; i < spec.modules; ++i) {
    const GeneratedModule m = ModuleNames(i);
    const std::filesystem::path dir =
        base / absl::StrCat("MODULE_", m.graph_hash, "+", m.flags_hash);
    std::filesystem::create_directories(dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir.string(), ": ", ec.message()));
    if (absl::Status s = WriteFile(dir / "model.neff", m.neff_contents_prefix, spec.neff_bytes);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = WriteFile(dir / "model.hlo_module.pb", absl::StrCat("HLO ", i), 512);
        !s.ok()) {
      return s;
    }
    std::ofstream flags(dir / "compile_flags.txt");
    if (!spec.target.empty()) flags << "--target=" << spec.target << " ";
    flags << "--model-type=transformer -O1\n";
    if (!flags) return absl::InternalError("cannot write compile_flags.txt");
    if (modules != nullptr) modules->push_back(m);
  }
  return absl::OkStatus();
}

}  // namespace neuron::testing
