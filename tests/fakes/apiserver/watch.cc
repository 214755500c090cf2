// File: tests/fakes/apiserver/watch.cc
#include "tests/fakes/apiserver/watch.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace neuron::fakes::apiserver {
namespace {
// Upstream sends bookmarks about once a minute; tests want them sooner.
constexpr auto kBookmarkEvery = std::chrono::seconds(1);
// Upstream picks a random timeout in [minRequestTimeout, 2*minRequestTimeout) = 30-60 min.
constexpr int64_t kDefaultTimeoutS = 1800;
}  // namespace

WatchStream::WatchStream(ApiCore* core, ResourcePath rp, const HttpRequest& req)
    : core_(core), rp_(std::move(rp)) {
  prefix_ = StorePrefix(rp_.type.group, rp_.type.plural, rp_.ns, rp_.all_namespaces);
  auto labels = LabelSelector::Parse(req.Param("labelSelector"));
  if (!labels.ok()) throw BadRequest(std::string(labels.status().message()));
  labels_ = *labels;
  auto fields = FieldSelector::Parse(req.Param("fieldSelector"), rp_.type.field_labels);
  if (!fields.ok()) throw BadRequest(std::string(fields.status().message()));
  fields_ = *fields;
  const Store& store = core_->store_;
  const int64_t rv = ParseRv(req.Param("resourceVersion"));
  if (rv == -2) throw BadRequest("invalid resourceVersion: " + req.Param("resourceVersion"));
  const bool send_initial = rv <= 0 || req.Flag("sendInitialEvents");
  bookmarks_ = req.Flag("allowWatchBookmarks");
  if (rv > 0 && rv < store.compacted_rv()) {
    throw Expired(absl::StrCat("too old resource version: ", rv, " (", store.compacted_rv(), ")"));
  }
  if (send_initial) {
    // RV unset/"0": upstream starts from its current state and sends it as ADDED events.
    for (const auto& [key, obj] : store.Scan(prefix_)) {
      if (Matches(*obj)) initial_.push_back(*obj);
    }
    cursor_ = store.rv();
    initial_end_bookmark_ = req.Flag("sendInitialEvents") && bookmarks_;
  } else {
    cursor_ = rv;
  }
  int64_t timeout_s = kDefaultTimeoutS;
  if (!req.Param("timeoutSeconds").empty() &&
      (!absl::SimpleAtoi(req.Param("timeoutSeconds"), &timeout_s) || timeout_s < 0)) {
    throw BadRequest("invalid timeoutSeconds");
  }
  if (timeout_s == 0) timeout_s = kDefaultTimeoutS;
  deadline_ = Clock::now() + std::chrono::seconds(timeout_s);
  next_bookmark_ = Clock::now() + kBookmarkEvery;
  close_epoch_ = core_->close_epoch_;
  kill_epoch_ = core_->kill_epoch_;
}

WatchStream::~WatchStream() {
  std::unique_lock lock(core_->mu_);
  --core_->open_watches_;
}

bool WatchStream::Matches(const json& obj) const {
  return labels_.Matches(obj.value("/metadata/labels"_json_pointer, json(nullptr))) &&
         fields_.Matches(obj);
}

void WatchStream::Emit(const std::string& type, const json& object, std::string* out) const {
  json o = object;
  if (type != "ERROR") {
    o["apiVersion"] = rp_.type.ApiVersion();
    o["kind"] = rp_.type.kind;
  }
  json ev = {{"type", type}, {"object", std::move(o)}};
  out->append(ev.dump(-1, ' ', false, json::error_handler_t::replace));
  out->push_back('\n');
}

json WatchStream::Bookmark(bool initial_end) const {
  json md = {{"resourceVersion", std::to_string(cursor_)}};
  if (initial_end) md["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  return {{"metadata", md}};
}

bool WatchStream::Next(std::string* out) {
  std::unique_lock lock(core_->mu_);
  if (done_) return false;
  if (!initial_.empty()) {
    while (!initial_.empty()) {
      Emit("ADDED", initial_.front(), out);
      initial_.pop_front();
    }
  }
  if (initial_end_bookmark_) {
    Emit("BOOKMARK", Bookmark(true), out);
    initial_end_bookmark_ = false;
  }
  if (!out->empty()) return true;
  while (true) {
    if (core_->shutdown_ || core_->close_epoch_ != close_epoch_) {
      done_ = true;
      return false;
    }
    if (core_->kill_epoch_ != kill_epoch_) {
      ApiError e = Expired(absl::StrCat("too old resource version: ", cursor_, " (",
                                        core_->store_.compacted_rv(), ")"));
      Emit("ERROR", e.ToStatus(), out);
      done_ = true;
      return false;
    }
    const Store& store = core_->store_;
    const auto& hist = store.history();
    for (size_t i = store.FirstEventAfter(cursor_); i < hist.size(); ++i) {
      const Event& e = hist[i];
      cursor_ = e.rv;
      if (e.key.rfind(prefix_, 0) != 0) continue;
      if (e.type == "ADDED") {
        if (Matches(e.object)) Emit("ADDED", e.object, out);
      } else if (e.type == "DELETED") {
        if (Matches(e.prev)) Emit("DELETED", e.object, out);
      } else {
        // Objects moving in or out of a selector appear as ADDED / DELETED, as upstream's cacher.
        const bool was = Matches(e.prev), is = Matches(e.object);
        if (was && is) Emit("MODIFIED", e.object, out);
        if (!was && is) Emit("ADDED", e.object, out);
        if (was && !is) Emit("DELETED", e.object, out);
      }
    }
    if (!out->empty()) return true;
    const auto now = Clock::now();
    if (now >= deadline_) {
      if (bookmarks_) Emit("BOOKMARK", Bookmark(false), out);
      done_ = true;
      return false;
    }
    if (bookmarks_ && now >= next_bookmark_) {
      next_bookmark_ = now + kBookmarkEvery;
      Emit("BOOKMARK", Bookmark(false), out);
      return true;
    }
    const auto wake = bookmarks_ ? std::min(deadline_, next_bookmark_) : deadline_;
    core_->cv_.wait_until(lock, wake);
  }
}

}  // namespace neuron::fakes::apiserver
