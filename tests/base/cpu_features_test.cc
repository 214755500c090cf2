// File: tests/base/cpu_features_test.cc
#include "lib/base/cpu_features.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace neuron {
namespace {

// The kernel's view of this CPU: /proc/cpuinfo's first "flags" line.
std::set<std::string> KernelCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST_CASE("MissingCpuFeatures agrees with the kernel's cpu flags", "[cpu_features]") {
#if defined(__x86_64__)
  const std::set<std::string> flags = KernelCpuFlags();
  REQUIRE_FALSE(flags.empty());
  std::string expected;
  // Our names -> /proc/cpuinfo's (pclmul is "pclmulqdq" there, bmi "bmi1").
  for (const auto& [ours, kernel] : {std::pair<const char*, const char*>{"avx2", "avx2"},
                                     {"bmi", "bmi1"},
                                     {"bmi2", "bmi2"},
                                     {"pclmul", "pclmulqdq"},
                                     {"popcnt", "popcnt"}}) {
    if (flags.count(kernel) != 0) continue;
    if (!expected.empty()) expected += ",";
    expected += ours;
  }
  CHECK(MissingCpuFeatures() == expected);
#else
  CHECK(MissingCpuFeatures().empty());
#endif
}

}  // namespace
}  // namespace neuron
