// File: lib/k8s/transport.h
// The HTTP seam. RestClient speaks to a Transport; HttpTransport is the real one (cpp-httplib,
// HTTPS with CA verification or plain http for tests, bearer or client-cert auth, refresh on 401);
// RetryingTransport wraps any Transport with backoff on connection errors, 429 and 5xx.
// Authorization headers are never logged.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/backoff.h"
#include "lib/base/clock.h"
#include "lib/k8s/config.h"

namespace neuron::k8s {

struct HttpRequest {
  std::string method{};  // GET POST PUT PATCH DELETE
  std::string path{};    // path + "?query", already escaped
  std::string body{};
  std::string content_type{};  // for bodies
  std::vector<std::pair<std::string, std::string>> headers{};
  // false: the caller handles 429 and 5xx itself (an eviction's 429 is a disruption budget's
  // answer, to be asked again later, not an overloaded server).
  bool retry = true;
};

struct HttpResponse {
  int status = 0;
  std::string body{};
  std::string retry_after{};  // Retry-After header, if any
  std::string content_type{};
};

// Lets another thread abort a streaming request promptly (closes its connection).
class StreamCanceller {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }
  // Used by transports: `fn` runs on Cancel() (immediately if already cancelled).
  void SetOnCancel(std::function<void()> fn);
  void ClearOnCancel();

 private:
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  std::function<void()> on_cancel_ ABSL_GUARDED_BY(mu_);
};

class Transport {
 public:
  virtual ~Transport() = default;
  // One request; a non-OK Status only for transport failures (connect/read errors: Unavailable).
  // HTTP error codes come back as a response.
  virtual absl::StatusOr<HttpResponse> Do(const HttpRequest& req) = 0;
  // A streaming GET: `on_head` gets the status code first (return false to abort, e.g. non-2xx
  // bodies are then delivered whole to on_data anyway for error decoding), then body bytes in
  // arbitrary chunks to `on_data` (return false to stop). Returns the final response head (body
  // empty unless status is not 2xx). Unavailable on connection loss.
  virtual absl::StatusOr<HttpResponse> Stream(const HttpRequest& req,
                                              const std::function<bool(absl::string_view)>& on_data,
                                              StreamCanceller* cancel) = 0;
};

struct TransportOptions {
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration read_timeout = absl::Seconds(60);  // streams use stream_read_timeout
  absl::Duration stream_read_timeout = absl::Minutes(15);
  std::string user_agent = "neuron-k8s/0.1";
};

// Real HTTP(S) transport for one ClientConfig. Thread-safe: requests use pooled connections.
absl::StatusOr<std::shared_ptr<Transport>> NewHttpTransport(const ClientConfig& cfg,
                                                            TransportOptions opts = {});

struct RetryOptions {
  int max_attempts = 5;  // total tries, >= 1
  BackoffPolicy backoff{absl::Milliseconds(200), absl::Seconds(10), 2.0, 0.2};
  absl::Duration max_retry_after = absl::Seconds(60);  // cap on honoured Retry-After
  Clock* clock = nullptr;                              // null = Clock::Real()
};

// Retries Do() on transport errors, 429 and 5xx (honouring Retry-After), up to max_attempts.
// Streams are passed through (the watcher reconnects on its own).
class RetryingTransport final : public Transport {
 public:
  RetryingTransport(std::shared_ptr<Transport> inner, RetryOptions opts = {});
  absl::StatusOr<HttpResponse> Do(const HttpRequest& req) override;
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<bool(absl::string_view)>& on_data,
                                      StreamCanceller* cancel) override;

 private:
  std::shared_ptr<Transport> inner_{};
  RetryOptions opts_;
  absl::Mutex mu_;
  uint64_t seed_ ABSL_GUARDED_BY(mu_) = 0x51ed270b27a3f1c5ULL;
};

// HttpTransport wrapped in RetryingTransport: what production code wants.
absl::StatusOr<std::shared_ptr<Transport>> NewTransport(const ClientConfig& cfg,
                                                        TransportOptions topts = {},
                                                        RetryOptions ropts = {});

// "Bearer abc" -> "Bearer <redacted>" for logs.
std::string RedactHeader(absl::string_view name, absl::string_view value);

}  // namespace neuron::k8s
