// File: lib/extender/view_feed.cc
#include "lib/extender/view_feed.h"

#include <spdlog/spdlog.h>

#include "lib/base/trim_heap.h"
#include "lib/k8s/resource.h"

namespace neuron::extender {
namespace {

k8s::ResourceRef RefFor(ViewFeed::Source s) {
  return s == ViewFeed::Source::kNodes ? k8s::resources::kNodes : k8s::resources::kPods;
}

PodHoldings ToHoldings(const nlohmann::json& obj) {
  absl::StatusOr<PodInfo> p = ParsePod(obj);
  // The API server validated the pod; one we cannot read holds nothing we could count.
  return p.ok() ? HoldingsFor(*p) : PodHoldings{};
}

// Keeps the last n records (the list that succeeded) and clears the buffer.
template <typename T>
std::vector<T> TakeLast(std::vector<T>& buf, size_t n) {
  std::vector<T> out;
  if (n > buf.size()) n = buf.size();
  out.reserve(n);
  std::move(buf.end() - static_cast<std::ptrdiff_t>(n), buf.end(), std::back_inserter(out));
  buf.clear();
  buf.shrink_to_fit();
  return out;
}

}  // namespace

ViewFeed::ViewFeed(k8s::RestClient& client, ClusterView& view, Source source)
    : view_(view), source_(source), reflector_(client, RefFor(source), "", {}, *this) {}

ViewFeed::~ViewFeed() { Stop(); }

void ViewFeed::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { reflector_.Run().IgnoreError(); });
}

void ViewFeed::Stop() {
  reflector_.Stop();
  if (thread_.joinable()) thread_.join();
}

void ViewFeed::TransformListed(nlohmann::json& item) {
  if (source_ == Source::kNodes) {
    listed_nodes_.push_back(ParseNode(item));
  } else {
    listed_pods_.push_back(ToHoldings(item));
  }
  item = nullptr;  // the typed record is all we keep
}

const JsonKeep* ViewFeed::ListedFields() const {
  return source_ == Source::kNodes ? &NodeFields() : &PodFields();
}

void ViewFeed::OnReplace(std::vector<nlohmann::json> items, const std::string& resource_version) {
  const size_t n = items.size();
  items.clear();
  if (source_ == Source::kNodes) {
    view_.ReplaceNodes(TakeLast(listed_nodes_, n));
  } else {
    view_.ReplacePods(TakeLast(listed_pods_, n));
  }
  spdlog::info("{} listed count={} resourceVersion={}",
               source_ == Source::kNodes ? "nodes" : "pods", n, resource_version);
  // A list's pages were parsed and dropped: give the freed heap back to the OS instead of
  // keeping the high-water mark of the largest list for the life of the process.
  TrimHeap();
  synced_.store(true);
}

void ViewFeed::OnEvent(k8s::WatchEvent& ev) {
  const bool deleted = ev.type == k8s::WatchEventType::kDeleted;
  if (source_ == Source::kNodes) {
    if (deleted) {
      view_.DeleteNode(ev.object.value("/metadata/name"_json_pointer, std::string()));
    } else {
      view_.UpsertNode(ParseNode(ev.object));
    }
    return;
  }
  PodHoldings p = ToHoldings(ev.object);
  if (p.key.empty()) return;
  if (deleted) {
    view_.RemovePod(p.key, p.uid);
  } else {
    view_.ApplyPod(std::move(p));
  }
}

}  // namespace neuron::extender
