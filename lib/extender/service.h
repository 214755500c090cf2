// File: lib/extender/service.h
// The extender's HTTP surface: POST /filter, /prioritize, /preempt, /bind (kube-scheduler's
// HTTPExtender), GET /debug/nodes/<name>, and the request/decision metrics behind /metrics.
// Bad input is answered with HTTP 400 and a JSON body {"Error": "..."} (kube-scheduler treats any
// non-200 as a failed call); nothing a client sends can take the process down.
#pragma once

#include <memory>
#include <optional>

#include "lib/extender/binder.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/decide.h"
#include "lib/extender/leader_fence.h"
#include "lib/extender/pod_cache.h"
#include "lib/httpserver/http_server.h"
#include "prometheus/registry.h"

namespace neuron::extender {

class Service {
 public:
  // `binder` may be null (no API access): /bind then answers with an Error.
  Service(ClusterView& view, Binder* binder, Policy policy,
          const std::shared_ptr<prometheus::Registry>& registry);
  ~Service();

  httpserver::Response Filter(const httpserver::Request& req);
  httpserver::Response Prioritize(const httpserver::Request& req);
  httpserver::Response Preempt(const httpserver::Request& req);
  httpserver::Response Bind(const httpserver::Request& req);
  httpserver::Response DebugNode(const httpserver::Request& req);

  // Registers the routes above on `server`.
  void Register(httpserver::HttpServer& server);
  // Optional: every call of kube-scheduler passes `fence` first (set before serving).
  void SetFence(LeaderFence* fence) { fence_ = fence; }

 private:
  struct Metrics;
  class HeapTrimmer;
  std::pair<int, int> CountDecisions(const FilterVerdicts& verdicts);
  // An error answer when the fence holds the call back, else nullopt.
  std::optional<httpserver::Response> Fenced(const char* verb, absl::Time start);
  httpserver::Response TrimAfterLarge(const httpserver::Request& req, httpserver::Response res);
  ClusterView& view_;
  Binder* binder_;
  LeaderFence* fence_ = nullptr;
  Policy policy_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<HeapTrimmer> trimmer_;
  PodCache pods_;  // the pod of a cycle is sent to /filter and again to /prioritize
};

}  // namespace neuron::extender
