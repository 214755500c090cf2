// File: lib/base/cpu_features.h
// The instruction set our JSON decoding is compiled for (simdjson On-Demand with Haswell's set on
// x86-64, cmake/dependencies.cmake), checked once at start: on a CPU without it the first JSON
// document would end the process with SIGILL and no word of why.
#pragma once

#include <string>

namespace neuron {

// The features this CPU lacks, comma-separated ("" when it has them all, and on other
// architectures: arm64's NEON is its baseline).
std::string MissingCpuFeatures();

// Logs "<program> needs a CPU with ..." to stderr and exits 1 when MissingCpuFeatures() is not "".
void RequireCpuFeatures(const char* program);

}  // namespace neuron
