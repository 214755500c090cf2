// File: tests/fakes/apiserver/watch.h
// One watch stream: replays history after the requested resourceVersion (or synthesises ADDED
// events for the current state), then follows new events, filtered by namespace and selectors,
// with periodic BOOKMARKs and a timeout. Produces newline-delimited JSON events.
#pragma once

#include <chrono>
#include <deque>
#include <string>

#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {

class WatchStream {
 public:
  // Called with core->mu_ held. Throws ApiError (400 bad selectors/RV, 410 too old RV).
  WatchStream(ApiCore* core, ResourcePath rp, const HttpRequest& req);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // Blocks until there is something to send or the stream ends. Appends event lines to *out.
  // Returns false when the stream has ended (send *out, then end the response).
  bool Next(std::string* out);

 private:
  using Clock = std::chrono::steady_clock;
  void Emit(const std::string& type, const json& object, std::string* out) const;
  json Bookmark(bool initial_end) const;
  bool Matches(const json& obj) const;

  ApiCore* core_;
  ResourcePath rp_;
  std::string prefix_;
  LabelSelector labels_;
  FieldSelector fields_;
  int64_t cursor_ = 0;  // last resourceVersion processed
  std::deque<json> initial_;
  bool initial_end_bookmark_ = false;
  bool bookmarks_ = false;
  Clock::time_point deadline_;
  Clock::time_point next_bookmark_;
  uint64_t close_epoch_ = 0;
  uint64_t kill_epoch_ = 0;
  bool done_ = false;
};

}  // namespace neuron::fakes::apiserver
