// File: tests/fakes/apiserver/fake_apiserver_watch_test.cc
// Watch streams of the fake apiserver over real chunked HTTP: initial state, resume, selectors,
// 410 after compaction (HTTP and in-stream), bookmarks, timeouts, CloseWatches and Stop.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

constexpr char kCms[] = "/api/v1/namespaces/ns/configmaps";

// Reads one watch stream in a thread and collects its events.
class Watcher {
 public:
  Watcher(FakeApiServer& fake, const std::string& query) : fake_(fake) {
    const int port = fake.port();
    const std::string path = std::string(kCms) + "?watch=1&" + query;
    thread_ = std::thread([this, port, path] {
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(60, 0);
      auto r = cli.Get(path.c_str(), [this](const char* data, size_t n) {
        std::unique_lock lock(mu_);
        buf_.append(data, n);
        for (size_t nl; (nl = buf_.find('\n')) != std::string::npos;) {
          events_.push_back(json::parse(buf_.substr(0, nl), nullptr, false));
          buf_.erase(0, nl + 1);
        }
        cv_.notify_all();
        return true;
      });
      std::unique_lock lock(mu_);
      status_ = r ? r->status : -1;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~Watcher() {
    fake_.CloseWatches();
    thread_.join();
  }
  // Waits (with a generous deadline) until n events arrived; returns them.
  std::vector<json> WaitEvents(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(20), [&] { return events_.size() >= n || done_; });
    return events_;
  }
  bool WaitDone() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return done_; });
  }
  int status() {
    std::unique_lock lock(mu_);
    return status_;
  }
  std::vector<json> events() {
    std::unique_lock lock(mu_);
    return events_;
  }

 private:
  FakeApiServer& fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string buf_;
  std::vector<json> events_;
  int status_ = 0;
  bool done_ = false;
  std::thread thread_;
};

json Cm(const std::string& name, const std::string& app) {
  return {{"metadata", {{"name", name}, {"labels", {{"app", app}}}}}, {"data", {{"k", "v"}}}};
}

std::string Rv(const json& obj) { return obj["metadata"]["resourceVersion"]; }

// Polls (with a deadline) until the server has exactly n open watch streams.
bool WaitOpenWatches(FakeApiServer& fake, size_t n) {
  for (int i = 0; i < 4000; ++i) {
    if (fake.OpenWatches() == n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST_CASE("watch sends current state, then changes, filtered by selector", "[apiserver][watch]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  const int port = fake.port();
  REQUIRE(Call(port, "POST", kCms, Cm("a", "x")).status == 201);
  REQUIRE(Call(port, "POST", kCms, Cm("b", "y")).status == 201);
  Watcher all(fake, "resourceVersion=0");
  Watcher sel(fake, "labelSelector=app%3Dx");
  REQUIRE(all.WaitEvents(2).size() == 2);
  REQUIRE(sel.WaitEvents(1).size() == 1);
  CHECK(all.events()[0]["type"] == "ADDED");
  CHECK(sel.events()[0]["object"]["metadata"]["name"] == "a");
  REQUIRE(Call(port, "PATCH", std::string(kCms) + "/a", json{{"data", {{"k", "2"}}}},
               "application/merge-patch+json")
              .status == 200);
  REQUIRE(Call(port, "PATCH", std::string(kCms) + "/a",
               json{{"metadata", {{"labels", {{"app", "z"}}}}}}, "application/merge-patch+json")
              .status == 200);
  REQUIRE(Call(port, "DELETE", std::string(kCms) + "/b").status == 200);
  auto ev = all.WaitEvents(5);
  REQUIRE(ev.size() == 5);
  CHECK(ev[2]["type"] == "MODIFIED");
  CHECK(ev[2]["object"]["data"]["k"] == "2");
  CHECK(ev[4]["type"] == "DELETED");
  CHECK(ev[4]["object"]["metadata"]["name"] == "b");
  CHECK(std::stoll(Rv(ev[4]["object"])) == fake.ResourceVersion());
  auto sev = sel.WaitEvents(3);
  REQUIRE(sev.size() == 3);
  CHECK(sev[1]["type"] == "MODIFIED");
  CHECK(sev[2]["type"] == "DELETED");  // left the selector
  CHECK(fake.OpenWatches() == 2);
}

TEST_CASE("watch resumes from a resourceVersion and 410s after compaction", "[apiserver][watch]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  const int port = fake.port();
  auto a = Call(port, "POST", kCms, Cm("a", "x"));
  const std::string rv_a = Rv(a.body);
  REQUIRE(Call(port, "POST", kCms, Cm("b", "x")).status == 201);
  REQUIRE(Call(port, "DELETE", std::string(kCms) + "/a").status == 200);
  {
    Watcher w(fake, "resourceVersion=" + rv_a);
    auto ev = w.WaitEvents(2);
    REQUIRE(ev.size() == 2);
    CHECK(ev[0]["type"] == "ADDED");
    CHECK(ev[0]["object"]["metadata"]["name"] == "b");
    CHECK(ev[1]["type"] == "DELETED");
  }
  fake.Compact();
  Watcher old(fake, "resourceVersion=" + rv_a);
  REQUIRE(old.WaitDone());
  CHECK(old.status() == 410);
  Watcher live(fake, "resourceVersion=" + std::to_string(fake.ResourceVersion()));
  REQUIRE(Call(port, "POST", kCms, Cm("c", "x")).status == 201);
  REQUIRE(live.WaitEvents(1).size() == 1);
  fake.Compact(/*kill_open_watches=*/true);
  REQUIRE(live.WaitDone());
  auto ev = live.events();
  REQUIRE(ev.size() == 2);
  CHECK(ev[1]["type"] == "ERROR");
  CHECK(ev[1]["object"]["code"] == 410);
  CHECK(ev[1]["object"]["reason"] == "Expired");
}

TEST_CASE("bookmarks, timeoutSeconds, CloseWatches and Stop end streams", "[apiserver][watch]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  REQUIRE(Call(fake.port(), "POST", kCms, Cm("a", "x")).status == 201);
  const int64_t rv = fake.ResourceVersion();
  {
    Watcher w(fake,
              "allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=" + std::to_string(rv));
    REQUIRE(w.WaitDone());
    auto ev = w.events();
    REQUIRE(!ev.empty());
    for (const auto& e : ev) {
      CHECK(e["type"] == "BOOKMARK");
      CHECK(e["object"]["metadata"]["resourceVersion"] == std::to_string(rv));
      CHECK(e["object"]["kind"] == "ConfigMap");
    }
  }
  {
    Watcher w(fake,
              "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan");
    auto ev = w.WaitEvents(2);
    REQUIRE(ev.size() >= 2);
    CHECK(ev[0]["type"] == "ADDED");
    CHECK(ev[1]["type"] == "BOOKMARK");
    CHECK(ev[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true");
  }
  {
    REQUIRE(WaitOpenWatches(fake, 0));
    Watcher w(fake, "resourceVersion=" + std::to_string(rv));
    REQUIRE(WaitOpenWatches(fake, 1));
    fake.CloseWatches();
    REQUIRE(w.WaitDone());
    CHECK(w.status() == 200);
  }
  Watcher w(fake, "resourceVersion=" + std::to_string(rv));
  // Once the stream is registered, Stop must end it and return.
  REQUIRE(WaitOpenWatches(fake, 1));
  fake.Stop();
  CHECK(w.WaitDone());
  auto bad = Watcher(fake, "labelSelector=%3D%3D");  // server stopped: connection fails
  CHECK(bad.WaitDone());
}

}  // namespace
}  // namespace neuron::fakes
