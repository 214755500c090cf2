// File: lib/extender/binder.h
// Bind: the extender that binds must create the Binding itself. Steps, each safe to retry:
//   1. GET the pod (fresh spec and UID; an already bound pod is success or a clear error);
//   2. choose the set with lib/topology's best fit (the device plugin's function) and reserve it
//      in the ClusterView, so concurrent binds to one node never overlap;
//   3. JSON merge patch of our four annotation keys only (other controllers' keys survive);
//   4. POST pods/<name>/binding; a 409 where the pod already sits on that node is success;
//   5. record a pod Event naming the node and IDs.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/wire.h"
#include "lib/k8s/events.h"
#include "lib/k8s/rest_client.h"

namespace neuron::extender {

struct BindOptions {
  // How long a choice stays reserved if the watch never shows the annotation.
  absl::Duration reservation_ttl = absl::Seconds(60);
};

// Outcome label for metrics: "ok", "conflict", "no_fit", "error".
struct BindOutcome {
  absl::Status status;
  std::string label;
  Choice choice;
};

class Binder {
 public:
  Binder(k8s::RestClient& client, ClusterView& view, k8s::EventRecorder* events,
         Clock* clock = nullptr, BindOptions opts = {});
  BindOutcome Bind(const BindingArgs& args);

 private:
  absl::Status PostBinding(const BindingArgs& args, const std::string& uid);

  k8s::RestClient& client_;
  ClusterView& view_;
  k8s::EventRecorder* events_;
  Clock& clock_;
  BindOptions opts_;
};

}  // namespace neuron::extender
