// File: lib/extender/service.cc
#include "lib/extender/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "lib/base/trim_heap.h"
#include "lib/extender/filter_answer.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace neuron::extender {
namespace {

using httpserver::Request;
using httpserver::Response;

Response BadRequest(const std::string& msg) { return Response::Json(400, EncodeError(msg)); }

}  // namespace

// Series are looked up once and kept: building label maps and hashing them on every request
// cost more than the counting.
struct Service::Metrics {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Family<prometheus::Counter>& decisions;
  prometheus::Family<prometheus::Counter>& binds;
  prometheus::Family<prometheus::Counter>& refusals;

  explicit Metrics(prometheus::Registry& r)
      : requests(prometheus::BuildCounter()
                     .Name("neuron_extender_requests_total")
                     .Help("Extender HTTP requests by verb and HTTP status code.")
                     .Register(r)),
        latency(prometheus::BuildHistogram()
                    .Name("neuron_extender_request_duration_seconds")
                    .Help("Time to answer an extender request, by verb (server side).")
                    .Register(r)),
        decisions(prometheus::BuildCounter()
                      .Name("neuron_extender_filter_decisions_total")
                      .Help("Per-node filter outcomes: fits, or the reason a node failed.")
                      .Register(r)),
        binds(prometheus::BuildCounter()
                  .Name("neuron_extender_binds_total")
                  .Help("Bind outcomes: ok, conflict (bind conflicts), no_fit, refused, error.")
                  .Register(r)),
        refusals(prometheus::BuildCounter()
                     .Name("neuron_extender_bind_refusals_total")
                     .Help("Binds refused before any write, by reason: unknown_pod, "
                           "scheduler_name, no_neuron_request, unknown_node, filter.")
                     .Register(r)) {}

  // The counter of `family` labelled {label: value}, created on first use.
  prometheus::Counter& CounterOf(prometheus::Family<prometheus::Counter>& family,
                                 const std::string& label, const std::string& value) {
    const std::string key = absl::StrCat(label, "\n", value);
    absl::MutexLock lock(&mu);
    prometheus::Counter*& c = counters[{&family, key}];
    if (!c) c = &family.Add({{label, value}});
    return *c;
  }

  Response Observe(const std::string& verb, absl::Time start, Response res) {
    prometheus::Histogram* h;
    prometheus::Counter* c;
    {
      absl::MutexLock lock(&mu);
      prometheus::Histogram*& hist = histograms[verb];
      if (!hist) {
        hist = &latency.Add({{"verb", verb}}, prometheus::Histogram::BucketBoundaries{
                                                  0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005,
                                                  0.01, 0.025, 0.05, 0.1, 0.25, 1});
      }
      prometheus::Counter*& count = by_code[{verb, res.status}];
      if (!count) count = &requests.Add({{"verb", verb}, {"code", std::to_string(res.status)}});
      h = hist;
      c = count;
    }
    c->Increment();
    h->Observe(absl::ToDoubleSeconds(absl::Now() - start));
    return res;
  }

  absl::Mutex mu;
  std::map<std::pair<const void*, std::string>, prometheus::Counter*> counters ABSL_GUARDED_BY(mu);
  std::map<std::string, prometheus::Histogram*> histograms ABSL_GUARDED_BY(mu);
  std::map<std::pair<std::string, int>, prometheus::Counter*> by_code ABSL_GUARDED_BY(mu);
};

Service::Service(ClusterView& view, Binder* binder, Policy policy,
                 const std::shared_ptr<prometheus::Registry>& registry)
    : view_(view), binder_(binder), policy_(policy) {
  static prometheus::Registry* fallback = new prometheus::Registry();
  metrics_ = std::make_unique<Metrics>(registry ? *registry : *fallback);
  trimmer_ = std::make_unique<HeapTrimmer>();
}

Service::~Service() = default;

std::optional<Response> Service::Fenced(const char* verb, absl::Time start) {
  if (!fence_) return std::nullopt;
  absl::Status s = fence_->Admit();
  if (s.ok()) return std::nullopt;
  spdlog::warn("{} not answered: {}", verb, std::string(s.message()));
  return metrics_->Observe(verb, start, Response::Json(503, EncodeError(std::string(s.message()))));
}

Response Service::Filter(const Request& req) {
  const absl::Time start = absl::Now();
  if (auto fenced = Fenced("filter", start)) return *std::move(fenced);
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(req.body, &pods_);
  if (!args.ok()) {
    return metrics_->Observe("filter", start, BadRequest(std::string(args.status().message())));
  }
  const FilterVerdicts verdicts = DecideFilter(view_, *args);
  const auto [failed, unresolvable] = CountDecisions(verdicts);
  spdlog::debug("filter pod={} candidates={} failed={} unresolvable={}", args->pod.Key(),
                verdicts.of.size(), failed, unresolvable);
  return metrics_->Observe("filter", start,
                           Response::Json(200, EncodeFilterAnswer(*args, verdicts)));
}

// A handful of distinct outcomes over hundreds of candidates: one metric update for each.
// Returns how many candidates failed, and failed unresolvably.
std::pair<int, int> Service::CountDecisions(const FilterVerdicts& verdicts) {
  std::vector<std::pair<const std::string*, int>> counts;
  std::pair<int, int> failed{0, 0};
  for (const Verdict* v : verdicts.of) {
    if (!v->fits) ++(v->unresolvable ? failed.second : failed.first);
    auto it = std::find_if(counts.begin(), counts.end(),
                           [v](const auto& c) { return *c.first == v->category; });
    if (it == counts.end()) {
      counts.emplace_back(&v->category, 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [category, n] : counts) {
    metrics_->CounterOf(metrics_->decisions, "result", *category).Increment(n);
  }
  return failed;
}

Response Service::Prioritize(const Request& req) {
  const absl::Time start = absl::Now();
  if (auto fenced = Fenced("prioritize", start)) return *std::move(fenced);
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(req.body, &pods_);
  if (!args.ok()) {
    return metrics_->Observe("prioritize", start, BadRequest(std::string(args.status().message())));
  }
  return metrics_->Observe(
      "prioritize", start,
      Response::Json(200, EncodeHostScores(args->CandidateNames(), Scores(view_, *args, policy_))));
}

Response Service::Preempt(const Request& req) {
  const absl::Time start = absl::Now();
  if (auto fenced = Fenced("preempt", start)) return *std::move(fenced);
  absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(req.body);
  if (!args.ok()) {
    return metrics_->Observe("preempt", start, BadRequest(std::string(args.status().message())));
  }
  return metrics_->Observe(
      "preempt", start,
      Response::Json(200, EncodePreemptionResult(extender::Preempt(view_, *args))));
}

Response Service::Bind(const Request& req) {
  const absl::Time start = absl::Now();
  if (auto fenced = Fenced("bind", start)) return *std::move(fenced);
  absl::StatusOr<BindingArgs> args = DecodeBindingArgs(req.body);
  if (!args.ok()) {
    return metrics_->Observe("bind", start, BadRequest(std::string(args.status().message())));
  }
  if (!binder_) {
    return metrics_->Observe(
        "bind", start, Response::Json(200, EncodeBindingResult("extender has no API access")));
  }
  BindOutcome out = binder_->Bind(*args);
  metrics_->CounterOf(metrics_->binds, "result", out.label).Increment();
  if (!out.refusal.empty()) {
    metrics_->CounterOf(metrics_->refusals, "reason", out.refusal).Increment();
    spdlog::warn("bind refused pod={}/{} node={} reason={} caller={} error=\"{}\"",
                 args->pod_namespace, args->pod_name, args->node, out.refusal, req.remote_addr,
                 std::string(out.status.message()));
  } else if (!out.status.ok()) {
    spdlog::warn("bind failed pod={}/{} node={} error=\"{}\"", args->pod_namespace, args->pod_name,
                 args->node, std::string(out.status.message()));
  }
  return metrics_->Observe(
      "bind", start, Response::Json(200, EncodeBindingResult(std::string(out.status.message()))));
}

Response Service::DebugNode(const Request& req) {
  static const std::string kPrefix = "/debug/nodes/";
  const std::string name = req.path.size() > kPrefix.size() ? req.path.substr(kPrefix.size()) : "";
  std::optional<nlohmann::json> j = view_.DebugNode(name);
  if (!j) return Response::Json(404, EncodeError("node " + name + " is not known"));
  return Response::Json(200, j->dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

// A full-Nodes request (nodeCacheCapable: false) parses tens of MB of Node objects. Handing the
// freed heap back (malloc_trim) keeps one such call from pinning the process at its high-water
// mark, but costs a few hundred ms on that heap: done on this thread, off the request path.
class Service::HeapTrimmer {
 public:
  HeapTrimmer() : thread_([this] { Loop(); }) {}
  ~HeapTrimmer() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  void Request() {
    absl::MutexLock lock(&mu_);
    pending_ = true;
  }

 private:
  void Loop() {
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &HeapTrimmer::Woken));
        if (stop_) return;
        pending_ = false;
      }
      TrimHeap();
    }
  }
  bool Woken() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pending_ || stop_; }

  absl::Mutex mu_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

Response Service::TrimAfterLarge(const Request& req, Response res) {
  constexpr size_t kLargeBody = size_t{4} << 20;
  if (req.body.size() >= kLargeBody) trimmer_->Request();
  return res;
}

void Service::Register(httpserver::HttpServer& server) {
  server.Handle("POST", "/filter",
                [this](const Request& r) { return TrimAfterLarge(r, Filter(r)); });
  server.Handle("POST", "/prioritize",
                [this](const Request& r) { return TrimAfterLarge(r, Prioritize(r)); });
  server.Handle("POST", "/preempt", [this](const Request& r) { return Preempt(r); });
  server.Handle("POST", "/bind", [this](const Request& r) { return Bind(r); });
  server.Handle("GET", "/debug/nodes/*", [this](const Request& r) { return DebugNode(r); });
}

}  // namespace neuron::extender
