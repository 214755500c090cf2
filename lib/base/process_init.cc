// File: lib/base/process_init.cc
#include "lib/base/process_init.h"

#include "absl/synchronization/mutex.h"
#include "lib/base/cpu_features.h"
#include "lib/base/fatal_signals.h"

namespace neuron {

void InitProcess(const char* program) {
  RequireCpuFeatures(program);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  InstallFatalSignalLogging(program);
}

}  // namespace neuron
