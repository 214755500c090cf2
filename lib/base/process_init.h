// File: lib/base/process_init.h
// Process-wide settings every binary applies first thing in main().
#pragma once

namespace neuron {

// Turns off absl::Mutex deadlock detection. Debian's Abseil is built with it on: every nested
// acquisition updates one global lock-order graph under one global lock, 7x the cost of the
// locks themselves and a point where all threads serialize. Tests keep it on (it catches
// lock-order inversions there); shipped binaries do not pay for it.
// Exits with a clear error first on a CPU without the instructions our JSON decoding is built
// for (lib/base/cpu_features.h). Also installs lib/base/fatal_signals.h's handlers under
// `program`'s name.
void InitProcess(const char* program = "neuron");

}  // namespace neuron
