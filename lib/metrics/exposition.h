// File: lib/metrics/exposition.h
// Prometheus text exposition (format 0.0.4) over lib/httpserver, using prometheus-cpp's data
// model and serializer. Two kinds of sources are served together:
//  - prometheus::Registry for the process's own instruments (counters, histograms), and
//  - snapshot collectors (any prometheus::Collectable) that build families on each scrape from
//    current state, so a vanished device simply stops appearing instead of leaving stale series.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/httpserver/http_server.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace neuron::metrics {

inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Collects every source (skipping expired ones) and serialises them in text format.
std::string Expose(const std::vector<std::weak_ptr<prometheus::Collectable>>& sources);

// Registers GET /metrics on `server`.
void ServeMetrics(httpserver::HttpServer& server,
                  std::vector<std::weak_ptr<prometheus::Collectable>> sources);

using LabelPairs = std::initializer_list<std::pair<const char*, std::string>>;

// Builds one metric family of a snapshot collector.
class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type);

  // Adds a sample. For counters the value must be monotonic across scrapes (the source's job).
  FamilyBuilder& Add(LabelPairs labels, double value);
  bool empty() const { return family_.metric.empty(); }
  // Moves the family out; the builder is empty afterwards.
  prometheus::MetricFamily Build() { return std::move(family_); }

 private:
  prometheus::MetricFamily family_;
};

}  // namespace neuron::metrics
