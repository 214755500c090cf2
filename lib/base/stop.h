// File: lib/base/stop.h
// A stop can come from a signal, a failing component and an explicit Stop() at the same time,
// but absl::Notification::Notify() may run only once (a second call is fatal). Every place that
// ends a run notifies through NotifyOnce().
#pragma once

#include "absl/synchronization/notification.h"

namespace neuron {

// Notifies `n` unless it already has been. Safe from any thread, any number of times, provided
// every notifier of `n` goes through it. Returns true for the call that notified.
bool NotifyOnce(absl::Notification& n);

}  // namespace neuron
