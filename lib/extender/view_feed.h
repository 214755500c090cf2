// File: lib/extender/view_feed.h
// List + watch of Nodes or Pods straight into the ClusterView, with no object cache between
// them: each listed item is parsed to its typed record as its page arrives and the JSON is
// dropped at once, so 50,000 pods cost the view's compact records, not trees of JSON. A full
// list (first start, or a relist after 410) replaces the view's set; watch events update it.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "lib/extender/cluster_view.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/watcher.h"

namespace neuron::extender {

class ViewFeed : private k8s::ReflectorSink {
 public:
  enum class Source { kNodes, kPods };
  ViewFeed(k8s::RestClient& client, ClusterView& view, Source source);
  ~ViewFeed() override;  // stops

  void Start();
  void Stop();  // prompt: cancels the open watch
  // Lists again and returns once the view holds that list (k8s::Reflector::Relist).
  absl::Status Resync(absl::Duration timeout) { return reflector_.Relist(timeout); }
  bool synced() const { return synced_.load(); }

 private:
  void TransformListed(nlohmann::json& item) override;
  const JsonKeep* ListedFields() const override;
  void OnReplace(std::vector<nlohmann::json> items, const std::string& resource_version) override;
  void OnEvent(k8s::WatchEvent& ev) override;

  ClusterView& view_;
  const Source source_;
  // Typed records of the list in progress, in arrival order. A list that failed half way is
  // retried from its start, so OnReplace takes only the last items.size() records.
  std::vector<NodeInfo> listed_nodes_;
  std::vector<PodHoldings> listed_pods_;
  std::atomic<bool> synced_{false};
  k8s::Reflector reflector_;
  std::thread thread_;
};

}  // namespace neuron::extender
