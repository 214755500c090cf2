// File: lib/k8s/watch_decoder.h
// Watch stream framing: the API server sends one JSON object per line
// ({"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}) over a chunked response whose
// chunk boundaries have nothing to do with lines. Feed() takes arbitrary byte chunks and yields
// every complete event; invalid JSON or an unknown type is an error, never a crash. Given the
// fields its reader keeps of each object, events are built only that far (JsonKeep), as lists
// are; an ERROR event's Status is always kept whole.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/base/json_prune.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* WatchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object{};
};

class WatchDecoder {
 public:
  // A single event larger than this is an error (a broken stream, not a real object).
  explicit WatchDecoder(size_t max_event_bytes = 64u << 20) : max_event_bytes_(max_event_bytes) {}
  // Keeps only `object_keep` of each event's object (copied: the decoder owns its copy).
  WatchDecoder(const JsonKeep& object_keep, size_t max_event_bytes = 64u << 20);

  // Appends `chunk` and moves every complete event into `out`. After an error the decoder stays
  // failed (returns the same error); the stream must be re-established.
  absl::Status Feed(absl::string_view chunk, std::vector<WatchEvent>& out);
  // Bytes of an unfinished event held back.
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  absl::Status DecodeLine(absl::string_view line, std::vector<WatchEvent>& out);

  size_t max_event_bytes_;
  std::optional<JsonKeep> event_keep_;  // {"type", "object": object_keep}
  std::string buf_{};
  size_t pos_ = 0;  // start of the unconsumed part of buf_
  absl::Status error_;
};

// Decodes one event object (one line), pruned to `event_keep` when given (what to keep of the
// whole event: its type and its object). Exposed for tests and the fuzz target.
absl::Status DecodeWatchEvent(absl::string_view line, WatchEvent& out,
                              const JsonKeep* event_keep = nullptr);

}  // namespace neuron::k8s
