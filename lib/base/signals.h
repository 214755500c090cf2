// File: lib/base/signals.h
// Graceful shutdown: SIGTERM and SIGINT become a notification that servers wait on.
#pragma once

#include "absl/synchronization/notification.h"

namespace neuron {

// Blocks SIGTERM and SIGINT in the calling thread and starts a thread that waits for them.
// Call it first thing in main(), before any other thread exists, so that every thread inherits
// the blocked mask and the signal is delivered only to the waiter. The returned notification
// fires on the first signal; it lives for the rest of the process.
// Anyone else stopping through it must use NotifyOnce() (lib/base/stop.h): a signal may arrive
// while the process is already stopping on its own.
absl::Notification& ShutdownOnSignals();

// True once the first signal has been handled (its notification done); for tests.
bool ShutdownSignalHandled();

}  // namespace neuron
