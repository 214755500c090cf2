#include "lib/metrics/exposition.h"

#include "prometheus/text_serializer.h"

namespace neuron::metrics {

std::string Expose(const std::vector<std::weak_ptr<prometheus::Collectable>>& sources) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : sources) {
    if (auto source = weak.lock()) {
      auto collected = source->Collect();
      families.insert(families.end(), std::make_move_iterator(collected.begin()),
                      std::make_move_iterator(collected.end()));
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

void ServeMetrics(httpserver::HttpServer& server,
                  std::vector<std::weak_ptr<prometheus::Collectable>> sources) {
  server.Handle("GET", "/metrics", [sources = std::move(sources)](const httpserver::Request&) {
    httpserver::Response res;
    res.content_type = kTextContentType;
    res.body = Expose(sources);
    return res;
  });
}

FamilyBuilder::FamilyBuilder(std::string name, std::string help, prometheus::MetricType type) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
}

FamilyBuilder& FamilyBuilder::Add(LabelPairs labels, double value) {
  prometheus::ClientMetric metric;
  for (const auto& [name, label_value] : labels) {
    metric.label.push_back({name, label_value});
  }
  switch (family_.type) {
    case prometheus::MetricType::Counter:
      metric.counter.value = value;
      break;
    case prometheus::MetricType::Gauge:
      metric.gauge.value = value;
      break;
    default:
      metric.untyped.value = value;
  }
  family_.metric.push_back(std::move(metric));
  return *this;
}

}  // namespace neuron::metrics
