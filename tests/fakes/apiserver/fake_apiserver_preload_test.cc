// File: tests/fakes/apiserver/fake_apiserver_preload_test.cc
// Bulk preload (NDJSON) and paging over a large collection: every object listed exactly once
// in key order across pages, selectors applied across page boundaries, the exact
// remainingItemCount on unfiltered lists, and clear errors for bad lines.
#include <set>
#include <sstream>
#include <string>

#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

json PodLine(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "p" + std::to_string(i)},
            {"namespace", "team-" + std::to_string(i % 3)},
            {"labels", {{"parity", i % 2 ? "odd" : "even"}}}}},
          {"spec", {{"nodeName", "n" + std::to_string(i % 7)}}},
          {"status", {{"phase", "Running"}}}};
}

std::string Ndjson(int pods) {
  std::string out =
      json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n0"}}}}.dump() + "\n\n";
  for (int i = 0; i < pods; ++i) out += PodLine(i).dump() + "\n";
  return out;
}

// Follows continue tokens; returns every item's namespace/name and checks each page's count.
std::vector<std::string> ListAll(int port, const std::string& query, int limit) {
  std::vector<std::string> out;
  std::string cont;
  for (int page = 0; page < 10000; ++page) {
    std::string path = "/api/v1/pods?limit=" + std::to_string(limit) + query;
    if (!cont.empty()) path += "&continue=" + cont;
    auto r = Call(port, "GET", path);
    REQUIRE(r.status == 200);
    REQUIRE(r.body["items"].size() <= static_cast<size_t>(limit));
    for (const json& it : r.body["items"]) {
      out.push_back(it["metadata"]["namespace"].get<std::string>() + "/" +
                    it["metadata"]["name"].get<std::string>());
      REQUIRE(it["kind"] == "Pod");
      REQUIRE(it["apiVersion"] == "v1");
    }
    cont = r.body["metadata"].value("continue", "");
    if (cont.empty()) break;
    if (query.empty()) {
      CHECK(r.body["metadata"]["remainingItemCount"].get<int64_t>() > 0);
    } else {
      CHECK(!r.body["metadata"].contains("remainingItemCount"));
    }
  }
  return out;
}

TEST_CASE("preload: objects listable and watchable, namespaces created", "[apiserver][preload]") {
  FakeApiServer fake;
  std::istringstream in(Ndjson(3000));
  REQUIRE(fake.Preload(in).ok());
  REQUIRE(fake.Start().ok());
  const json pod = fake.Get("/api/v1/namespaces/team-1/pods/p1");
  REQUIRE(pod.is_object());
  CHECK(pod["metadata"]["uid"].get<std::string>().size() == 36);
  CHECK(pod["status"]["phase"] == "Running");  // state of a running cluster, kept
  CHECK(fake.Get("/api/v1/nodes/n0").is_object());
  for (const char* ns : {"team-0", "team-1", "team-2"}) {
    CHECK(fake.Get(std::string("/api/v1/namespaces/") + ns).is_object());
    CHECK(fake.Get(std::string("/api/v1/namespaces/") + ns + "/configmaps/kube-root-ca.crt")
              .is_object());
  }

  const std::vector<std::string> all = ListAll(fake.port(), "", 100);
  CHECK(all.size() == 3000);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == 3000);
  CHECK(std::is_sorted(all.begin(), all.end()));
  const std::vector<std::string> odd = ListAll(fake.port(), "&labelSelector=parity%3Dodd", 100);
  CHECK(odd.size() == 1500);
  const std::vector<std::string> on_n3 =
      ListAll(fake.port(), "&fieldSelector=spec.nodeName%3Dn3", 64);
  CHECK(on_n3.size() == 3000 / 7 + (3 < 3000 % 7 ? 1 : 0));

  // Writes after the preload are watch events from the list's resourceVersion on.
  auto list = Call(fake.port(), "GET", "/api/v1/pods?limit=1");
  const std::string rv = list.body["metadata"]["resourceVersion"];
  json changed = pod;
  changed["metadata"]["labels"]["parity"] = "changed";
  REQUIRE(fake.Put("/api/v1/namespaces/team-1/pods/p1", changed).ok());
  httplib::Client cli("127.0.0.1", fake.port());
  cli.set_read_timeout(10, 0);
  std::string stream;
  cli.Get(("/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" + rv).c_str(),
          [&](const char* data, size_t n) {
            stream.append(data, n);
            return true;
          });
  CHECK(stream.find(R"("type":"MODIFIED")") != std::string::npos);
  CHECK(stream.find(R"("parity":"changed")") != std::string::npos);
  CHECK(stream.find(R"("name":"p2")") == std::string::npos);  // no replay of preloaded objects
}

TEST_CASE("preload: a bad line is named and refused", "[apiserver][preload]") {
  const std::string good = PodLine(1).dump();
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c :
       {Case{good + "\n{not json\n", "line 2: not valid JSON"},
        Case{R"({"apiVersion":"v1","kind":"Gizmo","metadata":{"name":"x"}})",
             "line 1: needs apiVersion and kind"},
        Case{R"({"apiVersion":"v1","kind":"Pod","metadata":{}})", "line 1: metadata.name"},
        Case{good + "\n" + good + "\n", "line 2: Pod team-1/p1 appears twice"}}) {
    FakeApiServer fake;
    std::istringstream in(c.text);
    absl::Status s = fake.Preload(in);
    CAPTURE(c.text, s.message());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find(c.message) == 0);
  }
}

}  // namespace
}  // namespace neuron::fakes
