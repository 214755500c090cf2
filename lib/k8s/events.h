// File: lib/k8s/events.h
// Records core/v1 Events about objects. Identical events (same object, type, reason, message,
// source) are aggregated: the first creates an Event, repeats PATCH count+1 and lastTimestamp,
// as client-go's EventRecorder does. Synchronous: returns the API status.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/clock.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

inline constexpr char kEventNormal[] = "Normal";
inline constexpr char kEventWarning[] = "Warning";

// An ObjectReference {apiVersion, kind, namespace, name, uid, resourceVersion} for `obj`.
nlohmann::json ObjectReference(const nlohmann::json& obj);

class EventRecorder {
 public:
  EventRecorder(RestClient& client, std::string component, std::string host = "",
                Clock* clock = nullptr);

  // `object` is the involved object (or an ObjectReference). Namespace of the Event = the
  // object's namespace, or "default" for cluster-scoped objects.
  absl::Status Event(const nlohmann::json& object, const std::string& type,
                     const std::string& reason, const std::string& message);

 private:
  struct Entry {
    std::string ns;
    std::string name;
    int64_t count = 0;
  };

  RestClient& client_;
  const std::string component_;
  const std::string host_;
  Clock& clock_;
  absl::Mutex mu_;
  std::map<std::string, Entry> seen_ ABSL_GUARDED_BY(mu_);  // aggregation key -> event
};

}  // namespace neuron::k8s
