#include "lib/k8s/watch_decoder.h"

#include "absl/strings/str_cat.h"

namespace neuron::k8s {

const char* WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "?";
}

namespace {

// Far deeper than any API object (a CRD's schema is the deepest), shallow enough for the
// recursive readers of a tree.
constexpr int kMaxEventDepth = 512;

// The whole event as a tree (simdjson reads, nlohmann holds); discarded when it is not JSON.
nlohmann::json ParseWhole(absl::string_view line) {
  absl::StatusOr<nlohmann::json> j =
      ParsePruned(std::string_view(line.data(), line.size()), JsonKeep{}, kMaxEventDepth);
  return j.ok() ? *std::move(j) : nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace

WatchDecoder::WatchDecoder(const JsonKeep& object_keep, size_t max_event_bytes)
    : max_event_bytes_(max_event_bytes),
      event_keep_(JsonKeep::Of({{"type"}, {"object", object_keep}})) {}

absl::Status DecodeWatchEvent(absl::string_view line, WatchEvent& out, const JsonKeep* event_keep) {
  nlohmann::json j;
  if (event_keep != nullptr) {
    absl::StatusOr<nlohmann::json> pruned =
        ParsePruned(std::string_view(line.data(), line.size()), *event_keep);
    if (!pruned.ok()) return absl::DataLossError("k8s watch: invalid JSON event");
    j = std::move(*pruned);
    // The object of an ERROR event is a Status, not the watched kind: keep all of it.
    if (j.is_object() && j.value("type", nlohmann::json()) == "ERROR") j = ParseWhole(line);
  } else {
    j = ParseWhole(line);
  }
  if (j.is_discarded()) return absl::DataLossError("k8s watch: invalid JSON event");
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return absl::DataLossError("k8s watch: event without a type");
  }
  const std::string& type = j["type"].get_ref<const std::string&>();
  if (type == "ADDED") {
    out.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    out.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    out.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    out.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    out.type = WatchEventType::kError;
  } else {
    return absl::DataLossError(
        absl::StrCat("k8s watch: unknown event type \"", type.substr(0, 32), "\""));
  }
  auto it = j.find("object");
  if (it == j.end() || !it->is_object()) {
    return absl::DataLossError("k8s watch: event without an object");
  }
  out.object = std::move(*it);
  return absl::OkStatus();
}

absl::Status WatchDecoder::DecodeLine(absl::string_view line, std::vector<WatchEvent>& out) {
  // Tolerate CR and blank lines between events.
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return absl::OkStatus();
  WatchEvent ev;
  const JsonKeep* keep = event_keep_ ? &*event_keep_ : nullptr;
  if (absl::Status s = DecodeWatchEvent(line, ev, keep); !s.ok()) return s;
  out.push_back(std::move(ev));
  return absl::OkStatus();
}

absl::Status WatchDecoder::Feed(absl::string_view chunk, std::vector<WatchEvent>& out) {
  if (!error_.ok()) return error_;
  // Compact the buffer before growing it.
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  const size_t scan_from = buf_.size();
  buf_.append(chunk.data(), chunk.size());
  size_t search = scan_from;
  while (true) {
    const size_t nl = buf_.find('\n', search);
    if (nl == std::string::npos) break;
    absl::string_view line(buf_.data() + pos_, nl - pos_);
    pos_ = nl + 1;
    search = pos_;
    if (absl::Status s = DecodeLine(line, out); !s.ok()) {
      error_ = s;
      return s;
    }
  }
  if (buf_.size() - pos_ > max_event_bytes_) {
    error_ = absl::ResourceExhaustedError("k8s watch: event exceeds the size limit");
    return error_;
  }
  // The API server also ends each event with "\n" when it frames JSON; some proxies may send a
  // final event without one: it stays buffered and is dropped at end of stream (re-delivered on
  // resume, since resourceVersion did not advance).
  return absl::OkStatus();
}

}  // namespace neuron::k8s
