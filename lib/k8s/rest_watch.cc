// RestClient::Watch: one watch stream decoded into events.
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/rest_client.h"

namespace neuron::k8s {

absl::Status RestClient::Watch(const ResourceRef& ref, const std::string& ns,
                               const WatchOptions& opts,
                               const std::function<bool(WatchEvent&)>& on_event,
                               StreamCanceller* cancel) {
  std::string path = ResourcePath(ref, ns) + "?watch=1";
  auto add = [&path](const char* k, const std::string& v) {
    if (!v.empty()) absl::StrAppend(&path, "&", k, "=", QueryEscape(v));
  };
  add("labelSelector", opts.label_selector);
  add("fieldSelector", opts.field_selector);
  add("resourceVersion", opts.resource_version);
  if (opts.allow_bookmarks) add("allowWatchBookmarks", "true");
  if (opts.timeout_seconds > 0) add("timeoutSeconds", absl::StrCat(opts.timeout_seconds));

  WatchDecoder decoder = opts.keep != nullptr ? WatchDecoder(*opts.keep) : WatchDecoder();
  std::vector<WatchEvent> events;
  absl::Status stream_status;  // error found while decoding / in an ERROR event
  auto on_data = [&](absl::string_view chunk) -> bool {
    events.clear();
    absl::Status s = decoder.Feed(chunk, events);
    for (WatchEvent& ev : events) {
      if (ev.type == WatchEventType::kError) {
        stream_status = StatusFromWatchError(ev.object.dump());
        return false;
      }
      if (!on_event(ev)) return false;
    }
    if (!s.ok()) {
      stream_status = s;
      return false;
    }
    return true;
  };
  absl::StatusOr<HttpResponse> head =
      transport_->Stream({"GET", path, "", "", {}}, on_data, cancel);
  if (!stream_status.ok()) return stream_status;
  if (!head.ok()) {
    if (head.status().code() == absl::StatusCode::kCancelled) return absl::OkStatus();
    return head.status();
  }
  return StatusFromHttp(head->status, head->body, head->retry_after);
}

}  // namespace neuron::k8s
