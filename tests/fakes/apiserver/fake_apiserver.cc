// File: tests/fakes/apiserver/fake_apiserver.cc
// HTTP glue: cpp-httplib server, error injection, request counting, non-resource endpoints
// (/version, /healthz, /readyz, /livez, /openapi/*), and chunked watch responses.
#include "tests/fakes/apiserver/fake_apiserver.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "httplib.h"
#include "spdlog/spdlog.h"
#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/watch.h"

namespace neuron::fakes {

using apiserver::ApiCore;
using apiserver::ApiError;
using apiserver::HttpRequest;
using apiserver::HttpResponse;
using apiserver::json;

class FakeApiServer::Impl {
 public:
  struct Injection {
    std::string method;
    std::string path_substr;
    int status;
    int times;
    int retry_after_s;
  };

  void Serve(const httplib::Request& req, httplib::Response& res);
  bool Inject(const httplib::Request& req, httplib::Response& res);
  bool NonResource(const httplib::Request& req, httplib::Response& res);

  ApiCore core;
  httplib::Server svr;
  std::thread thread;
  std::string host = "127.0.0.1";
  int port = 0;
  bool running = false;

  mutable std::mutex mu;  // guards the fields below
  std::vector<Injection> injections;
  std::vector<std::pair<std::string, std::string>> requests;  // method, path
  std::string git_version = "v1.32.0-fake";
};

namespace {

// GET /version's body for a gitVersion "vMAJOR.MINOR.PATCH[-+...]". Simplification: the build
// fields (commit, date, Go version) are fixed.
json VersionInfo(const std::string& git_version) {
  const std::vector<std::string> parts =
      absl::StrSplit(absl::StripPrefix(git_version, "v"), absl::MaxSplits('.', 2));
  return {{"major", parts.empty() ? "" : parts[0]},
          {"minor", parts.size() < 2 ? "" : parts[1]},
          {"gitVersion", git_version},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2024-12-11T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

}  // namespace

bool FakeApiServer::Impl::Inject(const httplib::Request& req, httplib::Response& res) {
  std::unique_lock lock(mu);
  for (auto it = injections.begin(); it != injections.end(); ++it) {
    if ((!it->method.empty() && it->method != req.method) ||
        !absl::StrContains(req.path, it->path_substr)) {
      continue;
    }
    ApiError e = apiserver::MakeError(it->status, "injected error");
    e.retry_after_s = it->retry_after_s;
    res.status = it->status;
    if (it->retry_after_s > 0) res.set_header("Retry-After", std::to_string(it->retry_after_s));
    res.set_content(e.ToStatus().dump(), "application/json");
    if (--it->times <= 0) injections.erase(it);
    return true;
  }
  return false;
}

bool FakeApiServer::Impl::NonResource(const httplib::Request& req, httplib::Response& res) {
  const std::string& p = req.path;
  res.status = 200;
  if (p == "/healthz" || p == "/readyz" || p == "/livez") {
    res.set_content("ok", "text/plain");
    return true;
  }
  if (p == "/version") {
    std::string reported;
    {
      std::unique_lock lock(mu);
      reported = git_version;
    }
    res.set_content(VersionInfo(reported).dump(), "application/json");
    return true;
  }
  if (p == "/openapi/v2" || p == "/swagger.json") {
    // Simplification: no OpenAPI v2; /openapi/v3 is minimal (see Registry::OpenApiV3).
    res.status = 404;
    res.set_content(apiserver::MakeError(404, "the server could not find the requested resource")
                        .ToStatus()
                        .dump(),
                    "application/json");
    return true;
  }
  res.status = -1;
  return false;
}

void FakeApiServer::Impl::Serve(const httplib::Request& req, httplib::Response& res) {
  {
    std::unique_lock lock(mu);
    requests.emplace_back(req.method, req.path);
  }
  if (Inject(req, res) || NonResource(req, res)) {
    spdlog::debug("request method={} path={} status={}", req.method, req.path, res.status);
    return;
  }
  HttpRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params) r.params.emplace(k, v);
  r.content_type = req.get_header_value("Content-Type");
  r.user_agent = req.get_header_value("User-Agent");
  r.body = req.body;
  if (core.IsWatch(r)) {
    HttpResponse err;
    std::shared_ptr<apiserver::WatchStream> w = core.StartWatch(r, &err);
    if (w == nullptr) {
      res.status = err.status;
      res.set_content(err.body.dump(-1, ' ', false, json::error_handler_t::replace),
                      "application/json");
      spdlog::debug("watch method={} path={} status={}", req.method, req.path, res.status);
      return;
    }
    spdlog::debug("watch method={} path={} query={}", req.method, req.path,
                  req.get_param_value("resourceVersion"));
    // The media-type parameter keeps httplib from gzip-compressing (and so buffering) the stream.
    res.set_chunked_content_provider("application/json;stream=watch",
                                     [w](size_t, httplib::DataSink& sink) {
                                       std::string out;
                                       const bool more = w->Next(&out);
                                       if (!out.empty() && !sink.write(out.data(), out.size())) {
                                         return false;
                                       }
                                       if (!more) sink.done();
                                       return true;
                                     });
    return;
  }
  HttpResponse out = core.Handle(r);
  res.status = out.status;
  for (const auto& [k, v] : out.headers) res.set_header(k, v);
  if (!out.raw_body.empty()) {
    res.set_content(std::move(out.raw_body), "application/json");
  } else {
    res.set_content(out.body.dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
  }
  spdlog::debug("request method={} path={} status={}", req.method, req.path, res.status);
}

FakeApiServer::FakeApiServer() : impl_(std::make_unique<Impl>()) {}

FakeApiServer::~FakeApiServer() { Stop(); }

absl::Status FakeApiServer::Start(const std::string& host, int port) {
  Impl& im = *impl_;
  if (im.running) return absl::FailedPreconditionError("already started");
  im.svr.new_task_queue = [] { return new httplib::ThreadPool(64); };
  im.svr.set_keep_alive_timeout(2);
  // Go's net/http (kube-apiserver) sets TCP_NODELAY on every connection; without it a reply
  // written in two parts waits ~40 ms for the client's delayed ACK.
  im.svr.set_tcp_nodelay(true);
  im.svr.set_keep_alive_max_count(1000);
  auto handler = [&im](const httplib::Request& req, httplib::Response& res) { im.Serve(req, res); };
  im.svr.Get(".*", handler);
  im.svr.Post(".*", handler);
  im.svr.Put(".*", handler);
  im.svr.Patch(".*", handler);
  im.svr.Delete(".*", handler);
  int bound = port;
  if (port == 0) {
    bound = im.svr.bind_to_any_port(host);
    if (bound <= 0) return absl::UnavailableError(absl::StrCat("cannot bind ", host));
  } else if (!im.svr.bind_to_port(host, port)) {
    return absl::UnavailableError(absl::StrCat("cannot bind ", host, ":", port));
  }
  im.host = host;
  im.port = bound;
  im.core.set_server_address(absl::StrCat(host, ":", bound));
  im.thread = std::thread([&im] { im.svr.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so wait for it before returning.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!im.svr.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  im.running = true;
  return absl::OkStatus();
}

void FakeApiServer::Stop() {
  Impl& im = *impl_;
  if (!im.running) return;
  im.running = false;
  im.core.Shutdown();
  im.svr.stop();
  if (im.thread.joinable()) im.thread.join();
}

int FakeApiServer::port() const { return impl_->port; }

std::string FakeApiServer::url() const {
  return absl::StrCat("http://", impl_->host, ":", impl_->port);
}

void FakeApiServer::InjectError(const std::string& method, const std::string& path_substr,
                                int status, int times, int retry_after_s) {
  std::unique_lock lock(impl_->mu);
  impl_->injections.push_back({method, path_substr, status, times, retry_after_s});
}

void FakeApiServer::Compact(bool kill_open_watches) { impl_->core.Compact(kill_open_watches); }

void FakeApiServer::CloseWatches() { impl_->core.CloseWatches(); }

nlohmann::json FakeApiServer::Get(const std::string& path) const { return impl_->core.Get(path); }

int64_t FakeApiServer::ResourceVersion() const { return impl_->core.ResourceVersion(); }

size_t FakeApiServer::RequestCount(const std::string& method,
                                   const std::string& path_substr) const {
  std::unique_lock lock(impl_->mu);
  size_t n = 0;
  for (const auto& [m, p] : impl_->requests) {
    if ((method.empty() || m == method) && absl::StrContains(p, path_substr)) ++n;
  }
  return n;
}

absl::Status FakeApiServer::Preload(std::istream& ndjson) { return impl_->core.Preload(ndjson); }

absl::Status FakeApiServer::Put(const std::string& path, const nlohmann::json& object) {
  return impl_->core.Put(path, object);
}

size_t FakeApiServer::OpenWatches() const { return impl_->core.OpenWatches(); }

void FakeApiServer::SetVersion(const std::string& git_version) {
  std::unique_lock lock(impl_->mu);
  impl_->git_version = git_version;
}

void FakeApiServer::DisableGroupVersion(const std::string& group_version) {
  impl_->core.DisableGroupVersion(group_version);
}

}  // namespace neuron::fakes
