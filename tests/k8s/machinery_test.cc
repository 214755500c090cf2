// Unit tests: watch decoder framing, store + indexes, work queue, retrying transport.
#include <atomic>
#include <deque>
#include <thread>

#include "catch2/catch.hpp"
#include "lib/k8s/store.h"
#include "lib/k8s/transport.h"
#include "lib/k8s/watch_decoder.h"
#include "lib/k8s/work_queue.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::k8s {
namespace {

using nlohmann::json;

std::string Ev(const std::string& type, const std::string& name, int rv) {
  return nlohmann::json{
             {"type", type},
             {"object",
              {{"kind", "Pod"},
               {"metadata",
                {{"name", name}, {"namespace", "ns"}, {"resourceVersion", std::to_string(rv)}}}}}}
             .dump() +
         "\n";
}

TEST_CASE("watch decoder: any chunking yields the same events", "[watch]") {
  const std::string stream =
      Ev("ADDED", "a", 1) + Ev("MODIFIED", "a", 2) + Ev("BOOKMARK", "", 3) + Ev("DELETED", "a", 4);
  for (size_t chunk = 1; chunk <= stream.size(); chunk += (chunk < 20 ? 1 : 37)) {
    WatchDecoder d;
    std::vector<WatchEvent> out;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      REQUIRE(d.Feed(absl::string_view(stream).substr(i, chunk), out).ok());
    }
    REQUIRE(out.size() == 4);
    CHECK(out[0].type == WatchEventType::kAdded);
    CHECK(out[1].type == WatchEventType::kModified);
    CHECK(out[2].type == WatchEventType::kBookmark);
    CHECK(out[3].type == WatchEventType::kDeleted);
    CHECK(out[3].object["metadata"]["resourceVersion"] == "4");
    CHECK(d.buffered() == 0);
  }
}

TEST_CASE("watch decoder with a keep: objects in the listed shape, ERROR kept whole", "[watch]") {
  const JsonKeep keep = JsonKeep::Of({{"metadata", JsonKeep::Of({{"name"}, {"resourceVersion"}})},
                                      {"spec", JsonKeep::Of({{"nodeName"}})}});
  json pod = {{"kind", "Pod"},
              {"metadata",
               {{"name", "a"}, {"resourceVersion", "7"}, {"managedFields", json::array({1, 2})}}},
              {"spec", {{"nodeName", "n1"}, {"containers", json::array({{{"name", "c"}}})}}},
              {"status", {{"phase", "Pending"}}}};
  const json status = {
      {"kind", "Status"}, {"code", 410}, {"reason", "Expired"}, {"message", "too old"}};
  const std::string stream = json{{"type", "MODIFIED"}, {"object", pod}}.dump() + "\n" +
                             json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
  for (size_t chunk : {size_t{1}, size_t{7}, stream.size()}) {
    WatchDecoder d(keep);
    std::vector<WatchEvent> out;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      REQUIRE(d.Feed(absl::string_view(stream).substr(i, chunk), out).ok());
    }
    REQUIRE(out.size() == 2);
    CHECK(out[0].type == WatchEventType::kModified);
    CHECK(out[0].object == json{{"metadata", {{"name", "a"}, {"resourceVersion", "7"}}},
                                {"spec", {{"nodeName", "n1"}}}});
    CHECK(out[1].type == WatchEventType::kError);
    CHECK(out[1].object == status);  // the Status's code and message, not a Pod's fields
  }
  // Pruning never makes bad input good.
  WatchDecoder bad(keep);
  std::vector<WatchEvent> out;
  CHECK(bad.Feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":}\n", out).code() ==
        absl::StatusCode::kDataLoss);
  WatchDecoder untyped(keep);
  CHECK(!untyped.Feed("{\"object\":{}}\n", out).ok());
}

TEST_CASE("watch decoder: invalid input is an error that sticks", "[watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> out;
  CHECK(d.Feed(Ev("ADDED", "a", 1) + "{not json}\n" + Ev("ADDED", "b", 2), out).code() ==
        absl::StatusCode::kDataLoss);
  CHECK(out.size() == 1);  // the good event before the break is delivered
  CHECK(!d.Feed(Ev("ADDED", "c", 3), out).ok());
  WatchDecoder d2;
  CHECK(!d2.Feed("{\"type\":\"WHAT\",\"object\":{}}\n", out).ok());
  WatchDecoder d3;
  CHECK(!d3.Feed("{\"type\":\"ADDED\"}\n", out).ok());
  WatchDecoder small(16);
  CHECK(small.Feed(std::string(100, 'x'), out).code() == absl::StatusCode::kResourceExhausted);
  WatchDecoder partial;
  out.clear();
  CHECK(partial.Feed("\r\n\n{\"type\":\"ADDED\",\"obj", out).ok());
  CHECK(out.empty());
  CHECK(partial.buffered() > 0);
}

nlohmann::json Pod(const std::string& name, const std::string& node, int rv) {
  return {
      {"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", std::to_string(rv)}}},
      {"spec", {{"nodeName", node}}}};
}

ObjectPtr P(const nlohmann::json& j) { return std::make_shared<const nlohmann::json>(j); }

TEST_CASE("store: upsert, delete, index by node, replace deltas", "[store]") {
  Store s;
  REQUIRE(s.AddIndexer("node", IndexByNodeName).ok());
  CHECK(s.AddIndexer("node", IndexByNodeName).code() == absl::StatusCode::kAlreadyExists);
  CHECK(s.Upsert(P(Pod("a", "n1", 1))) == nullptr);
  s.Upsert(P(Pod("b", "n1", 1)));
  s.Upsert(P(Pod("c", "", 1)));
  CHECK(s.ByIndex("node", "n1").size() == 2);
  auto old = s.Upsert(P(Pod("a", "n2", 2)));  // moved node
  REQUIRE(old);
  CHECK((*old)["spec"]["nodeName"] == "n1");
  CHECK(s.ByIndex("node", "n1").size() == 1);
  CHECK(s.ByIndex("node", "n2").size() == 1);
  CHECK(s.Get("ns/a"));
  CHECK(s.Delete("ns/b"));
  CHECK(s.ByIndex("node", "n1").empty());
  CHECK(s.IndexValues("node") == std::vector<std::string>{"n2"});

  // Now: a(rv2,n2), c(rv1). Replace with: a unchanged, c updated, d new.
  StoreDeltas d = s.Replace({P(Pod("a", "n2", 2)), P(Pod("c", "n3", 5)), P(Pod("d", "n3", 6))});
  CHECK(d.added.size() == 1);
  CHECK(d.updated.size() == 1);
  CHECK(d.deleted.empty());
  d = s.Replace({P(Pod("d", "n3", 6))});
  CHECK(d.deleted.size() == 2);
  CHECK(s.size() == 1);
  CHECK(s.ByIndex("node", "n3").size() == 1);
  CHECK(s.ByIndex("node", "n2").empty());
  CHECK(ObjectKey(nlohmann::json{{"metadata", {{"name", "node1"}}}}) == "node1");
}

TEST_CASE("work queue: dedup, processing re-add, shutdown", "[queue]") {
  fakes::FakeClock clock;
  WorkQueue q({.clock = &clock});
  q.Add("a");
  q.Add("a");
  q.Add("b");
  CHECK(q.Len() == 2);
  auto a = q.Get();
  REQUIRE(a == "a");
  q.Add("a");  // re-added while processing: not handed out again yet
  CHECK(q.Len() == 1);
  CHECK(q.Get() == "b");
  CHECK(!q.GetFor(absl::Milliseconds(10)));
  q.Add("a");  // twice more: still one reprocess
  q.Done("a");
  CHECK(q.Len() == 1);
  CHECK(q.Get() == "a");
  q.Done("a");
  q.Done("b");
  CHECK(q.Len() == 0);
  // Catch2 v2 assertions are not thread-safe: the worker records, the main thread checks.
  std::atomic<bool> got_item{true};
  std::thread t([&] { got_item = q.Get().has_value(); });
  q.ShutDown();
  t.join();
  CHECK_FALSE(got_item);
  q.Add("c");
  CHECK(q.Len() == 0);
}

TEST_CASE("work queue: per-item exponential backoff on a fake clock", "[queue]") {
  fakes::FakeClock clock;
  WorkQueue q({.poll = absl::Milliseconds(1), .clock = &clock});
  CHECK(q.NextBackoff("x") == absl::Milliseconds(5));
  q.AddRateLimited("x");  // 5ms
  CHECK(q.NumRequeues("x") == 1);
  CHECK(q.NextBackoff("x") == absl::Milliseconds(10));
  CHECK(q.DelayedLen() == 1);
  CHECK(!q.GetFor(absl::Milliseconds(5)));  // fake time has not moved
  clock.Advance(absl::Milliseconds(5));
  CHECK(q.GetFor(absl::Seconds(5)) == "x");
  q.Done("x");
  for (int i = 0; i < 30; ++i) q.AddRateLimited("x");
  CHECK(q.NextBackoff("x") == absl::Seconds(1000));  // capped
  q.Forget("x");
  CHECK(q.NumRequeues("x") == 0);
  CHECK(q.NextBackoff("x") == absl::Milliseconds(5));

  // AddAfter keeps the earliest time for one item; a blocked Get wakes when time passes.
  WorkQueue q2({.poll = absl::Milliseconds(1), .clock = &clock});
  q2.AddAfter("x", absl::Seconds(100));
  q2.AddAfter("y", absl::Seconds(10));
  q2.AddAfter("y", absl::Seconds(3));
  q2.AddAfter("y", absl::Seconds(20));
  CHECK(q2.DelayedLen() == 2);
  std::optional<std::string> got;
  std::thread t([&] { got = q2.Get(); });
  clock.Advance(absl::Seconds(3));
  t.join();
  CHECK(got == "y");
}

// A scripted Transport for the retry tests.
class ScriptedTransport : public Transport {
 public:
  std::deque<absl::StatusOr<HttpResponse>> script;
  std::atomic<int> calls{0};  // read by the test's clock-advancing thread
  absl::StatusOr<HttpResponse> Do(const HttpRequest&) override {
    ++calls;
    auto r = script.front();
    script.pop_front();
    return r;
  }
  absl::StatusOr<HttpResponse> Stream(const HttpRequest&,
                                      const std::function<bool(absl::string_view)>&,
                                      StreamCanceller*) override {
    return absl::UnimplementedError("");
  }
};

HttpResponse Resp(int code, std::string retry_after = "") {
  HttpResponse r;
  r.status = code;
  r.retry_after = std::move(retry_after);
  return r;
}

TEST_CASE("retrying transport: 5xx, 429 with Retry-After, connection errors, max attempts",
          "[transport]") {
  fakes::FakeClock clock;
  const absl::Time start = clock.Now();
  auto inner = std::make_shared<ScriptedTransport>();
  inner->script = {absl::UnavailableError("refused"), Resp(503), Resp(429, "3"), Resp(200)};
  RetryingTransport rt(inner, {.max_attempts = 5, .clock = &clock});
  std::thread advancer([&] {
    // Each retry sleeps on the fake clock; wake it until the call is done.
    while (inner->calls < 4) {
      if (clock.sleepers() > 0) clock.Advance(absl::Seconds(5));
      std::this_thread::yield();
    }
  });
  auto r = rt.Do({"GET", "/x", "", "", {}});
  advancer.join();
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(inner->calls == 4);
  CHECK(clock.Now() - start >= absl::Seconds(3));

  auto inner2 = std::make_shared<ScriptedTransport>();
  inner2->script = {Resp(500), Resp(500), Resp(404)};
  RetryingTransport rt2(inner2, {.max_attempts = 2,
                                 .backoff = {absl::ZeroDuration(), absl::ZeroDuration(), 1, 0},
                                 .clock = &clock});
  CHECK(rt2.Do({"GET", "/x", "", "", {}})->status == 500);
  CHECK(inner2->calls == 2);
  inner2->script = {Resp(404)};
  CHECK(rt2.Do({"GET", "/x", "", "", {}})->status == 404);  // not retried
}

TEST_CASE("authorization is redacted for logs", "[transport]") {
  CHECK(RedactHeader("Authorization", "Bearer secret") == "Bearer <redacted>");
  CHECK(RedactHeader("Accept", "application/json") == "application/json");
}

}  // namespace
}  // namespace neuron::k8s
