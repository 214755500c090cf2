#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/k8s/transport.h"
#include "spdlog/spdlog.h"

namespace neuron::k8s {

RetryingTransport::RetryingTransport(std::shared_ptr<Transport> inner, RetryOptions opts)
    : inner_(std::move(inner)), opts_(opts) {}

absl::StatusOr<HttpResponse> RetryingTransport::Do(const HttpRequest& req) {
  Clock& clock = opts_.clock ? *opts_.clock : Clock::Real();
  uint64_t seed;
  {
    absl::MutexLock lock(&mu_);
    seed = seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  Backoff backoff(opts_.backoff, seed);
  const int max_attempts = std::max(1, opts_.max_attempts);
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<HttpResponse> res = inner_->Do(req);
    absl::Duration delay = backoff.Next();
    bool retry = false;
    if (!res.ok()) {
      retry = res.status().code() == absl::StatusCode::kUnavailable;
    } else if (res->status == 429 || res->status >= 500) {
      retry = true;
      int secs = 0;
      if (!res->retry_after.empty() && absl::SimpleAtoi(res->retry_after, &secs) && secs >= 0) {
        delay = std::min(absl::Seconds(secs), opts_.max_retry_after);
      }
    }
    if (!retry || !req.retry || attempt >= max_attempts) return res;
    spdlog::debug(
        "k8s retry method={} path={} attempt={} reason={} delay={}", req.method, req.path, attempt,
        res.ok() ? absl::StrCat("http ", res->status) : std::string(res.status().message()),
        absl::FormatDuration(delay));
    clock.SleepFor(delay);
  }
}

absl::StatusOr<HttpResponse> RetryingTransport::Stream(
    const HttpRequest& req, const std::function<bool(absl::string_view)>& on_data,
    StreamCanceller* cancel) {
  return inner_->Stream(req, on_data, cancel);
}

}  // namespace neuron::k8s
