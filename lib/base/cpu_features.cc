// File: lib/base/cpu_features.cc
#include "lib/base/cpu_features.h"

#include <cstdio>
#include <cstdlib>

namespace neuron {

std::string MissingCpuFeatures() {
  std::string missing;
#if defined(__x86_64__)
  auto need = [&missing](bool has, const char* name) {
    if (has) return;
    if (!missing.empty()) missing += ",";
    missing += name;
  };
  __builtin_cpu_init();
  need(__builtin_cpu_supports("avx2"), "avx2");
  need(__builtin_cpu_supports("bmi"), "bmi");
  need(__builtin_cpu_supports("bmi2"), "bmi2");
  need(__builtin_cpu_supports("pclmul"), "pclmul");
  need(__builtin_cpu_supports("popcnt"), "popcnt");
#endif
  return missing;
}

void RequireCpuFeatures(const char* program) {
  const std::string missing = MissingCpuFeatures();
  if (missing.empty()) return;
  // Before logging is set up, and the process cannot do its job: plain stderr, then exit.
  std::fprintf(stderr,
               "%s needs an x86-64 CPU with AVX2, BMI1/2, PCLMUL and POPCNT (Intel Haswell, AMD "
               "Excavator or later: every EC2 x86 instance type); this one lacks: %s\n",
               program, missing.c_str());
  std::exit(1);
}

}  // namespace neuron
