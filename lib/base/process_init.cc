// File: lib/base/process_init.cc
#include "lib/base/process_init.h"

#include "absl/synchronization/mutex.h"

namespace neuron {

void InitProcess() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace neuron
