// File: tests/cache/registry_fake_test.cc
// The registry client against small cpp-httplib fakes, for what a real registry will not do on
// request: Bearer token auth, redirects to another host, and hostile or broken servers (wrong
// bytes, too many bytes, a stall mid-blob, a manifest that does not match its digest).
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/cache/digest.h"
#include "lib/cache/registry_client.h"
#include "tests/testing/local_registry.h"

namespace neuron::cache {
namespace {

// An httplib server on 127.0.0.1 in its own thread; handlers are added before Start().
class FakeServer {
 public:
  FakeServer() = default;
  ~FakeServer() {
    stopping = true;
    svr.stop();
    if (thread_.joinable()) thread_.join();
  }
  void Start() {
    port_ = svr.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr.listen_after_bind(); });
    neuron::testing::Eventually([this] { return svr.is_running(); });
  }
  std::string host() const { return absl::StrCat("127.0.0.1:", port_); }

  httplib::Server svr;
  std::atomic<bool> stopping{false};

 private:
  int port_ = 0;
  std::thread thread_;
};

const std::string kBlob = [] {
  std::string b;
  for (int i = 0; i < 100000; ++i) b.push_back(static_cast<char>(i % 253));
  return b;
}();

std::string Manifest(const std::string& layer_digest, uint64_t size) {
  return absl::StrCat(
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)",
      R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)",
      std::string(64, 'c'), R"(","size":2},"layers":[{"mediaType":)",
      R"("application/vnd.oci.image.layer.v1.tar+gzip","digest":")", layer_digest, R"(","size":)",
      size, "}]}");
}

ImageReference FakeRef(const std::string& text) {
  auto r = ParseImageReference(text);
  REQUIRE(r.ok());
  return *r;
}

RegistryOptions PlainHttp(const FakeServer& s) {
  RegistryOptions o;
  o.plain_http = {s.host()};
  return o;
}

// Files the tests download go to one temp dir, removed at exit.
struct TempDir {
  TempDir() : path(neuron::testing::MakeTempDir("neuron-registry-fake")) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

std::string TempPath(const std::string& name) {
  static const TempDir dir;
  return dir.path + "/" + name;
}

TEST_CASE("Bearer token flow, token cached, redirect to storage without Authorization") {
  FakeServer storage;
  std::atomic<int> storage_saw_auth{0};
  storage.svr.Get("/bucket/blob", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Authorization")) ++storage_saw_auth;
    res.set_content(kBlob, "application/octet-stream");
  });
  storage.Start();

  FakeServer reg;
  std::atomic<int> token_requests{0};
  std::string token_query;
  const std::string blob_digest = Sha256Digest(kBlob);
  auto authorized = [](const httplib::Request& req, httplib::Response& res, const std::string& c) {
    if (req.get_header_value("Authorization") == "Bearer tok-123") return true;
    res.status = 401;
    res.set_header("WWW-Authenticate", c);
    res.set_content(R"({"errors":[{"code":"UNAUTHORIZED"}]})", "application/json");
    return false;
  };
  std::string realm_challenge;
  reg.svr.Get("/token", [&](const httplib::Request& req, httplib::Response& res) {
    ++token_requests;
    token_query = req.get_param_value("scope") + "|" + req.get_param_value("service") + "|" +
                  req.get_header_value("Authorization");
    res.set_content(R"({"access_token":"tok-123","expires_in":300})", "application/json");
  });
  reg.svr.Get("/v2/team/cache/manifests/v1",
              [&](const httplib::Request& req, httplib::Response& res) {
                if (!authorized(req, res, realm_challenge)) return;
                res.set_content(Manifest(blob_digest, kBlob.size()), std::string(kOciManifestType));
              });
  reg.svr.Get("/v2/team/cache/blobs/" + blob_digest,
              [&](const httplib::Request& req, httplib::Response& res) {
                if (!authorized(req, res, realm_challenge)) return;
                res.status = 307;
                res.set_header("Location", "http://" + storage.host() + "/bucket/blob");
              });
  reg.Start();
  realm_challenge =
      absl::StrCat(R"(Bearer realm="http://)", reg.host(),
                   R"(/token",service="fake-registry",scope="repository:team/cache:push")");

  RegistryOptions opts = PlainHttp(reg);
  opts.plain_http.push_back(storage.host());
  RegistryClient client(opts);
  const ImageReference ref = FakeRef(reg.host() + "/team/cache:v1");
  const CredentialLookup creds = [](const std::string&) {
    return std::optional<Credentials>(Credentials{"robot", "pw"});
  };
  absl::StatusOr<ResolvedImage> img = client.Resolve(ref, creds);
  INFO(img.status().ToString());
  REQUIRE(img.ok());
  CHECK(img->digest == Sha256Digest(Manifest(blob_digest, kBlob.size())));
  CHECK(token_query == "repository:team/cache:pull|fake-registry|Basic cm9ib3Q6cHc=");

  const std::string dest = TempPath("bearer.blob");
  absl::Status s = client.FetchBlob(ref, img->manifest.layers[0], creds, dest);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(Sha256Digest(kBlob) == blob_digest);
  CHECK(std::filesystem::file_size(dest) == kBlob.size());
  CHECK(storage_saw_auth == 0);
  CHECK(token_requests == 1);  // the blob request reused the cached token
}

// A registry whose blob endpoint runs `handler`; the manifest is never needed.
struct BlobServer {
  explicit BlobServer(httplib::Server::Handler handler) {
    server.svr.Get(R"(/v2/x/blobs/(.*))", std::move(handler));
    server.Start();
  }
  FakeServer server;
};

TEST_CASE("blob bytes that do not match the digest are DataLoss and leave no file") {
  std::string evil = kBlob;
  evil[500] ^= 1;
  BlobServer bs([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(evil, "application/octet-stream");
  });
  RegistryClient client(PlainHttp(bs.server));
  const std::string dest = TempPath("evil.blob");
  const Descriptor want{"", Sha256Digest(kBlob), kBlob.size()};
  absl::Status s = client.FetchBlob(FakeRef(bs.server.host() + "/x:v"), want, {}, dest);
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(s.message()), Catch::Contains("expected digest " + want.digest));
  CHECK_THAT(std::string(s.message()), Catch::Contains("got " + Sha256Digest(evil)));
  CHECK_FALSE(std::filesystem::exists(dest));
}

TEST_CASE("a blob longer or shorter than its descriptor is DataLoss") {
  BlobServer bs([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(kBlob, "application/octet-stream");
  });
  RegistryClient client(PlainHttp(bs.server));
  const std::string dest = TempPath("size.blob");
  const ImageReference ref = FakeRef(bs.server.host() + "/x:v");
  absl::Status shorter =
      client.FetchBlob(ref, {"", Sha256Digest(kBlob), kBlob.size() - 1}, {}, dest);
  CHECK(shorter.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(shorter.message()), Catch::Contains("more than the expected"));
  CHECK_FALSE(std::filesystem::exists(dest));
  absl::Status longer =
      client.FetchBlob(ref, {"", Sha256Digest(kBlob), kBlob.size() + 1}, {}, dest);
  CHECK(longer.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(longer.message()), Catch::Contains("bytes, got"));
  CHECK_FALSE(std::filesystem::exists(dest));
}

TEST_CASE("half a blob then a stall is Unavailable 'stalled' within the stall timeout") {
  std::atomic<bool>* stopping = nullptr;
  BlobServer bs([&](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(kBlob.size(), "application/octet-stream",
                             [&](size_t offset, size_t, httplib::DataSink& sink) {
                               if (offset == 0) return sink.write(kBlob.data(), kBlob.size() / 2);
                               for (int i = 0; i < 100 && !*stopping; ++i) {
                                 std::this_thread::sleep_for(std::chrono::milliseconds(50));
                               }
                               return false;
                             });
  });
  stopping = &bs.server.stopping;
  RegistryOptions opts = PlainHttp(bs.server);
  opts.stall_timeout = absl::Seconds(1);
  RegistryClient client(opts);
  const std::string dest = TempPath("stall.blob");
  const absl::Time start = absl::Now();
  absl::Status s = client.FetchBlob(FakeRef(bs.server.host() + "/x:v"),
                                    {"", Sha256Digest(kBlob), kBlob.size()}, {}, dest);
  const absl::Duration took = absl::Now() - start;
  CHECK(s.code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(s.message()), Catch::Contains("stalled"));
  CHECK(took < absl::Seconds(3));
  CHECK_FALSE(std::filesystem::exists(dest));
}

TEST_CASE("progress returning false cancels the download") {
  BlobServer bs([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(kBlob, "application/octet-stream");
  });
  RegistryClient client(PlainHttp(bs.server));
  const std::string dest = TempPath("cancel.blob");
  absl::Status s =
      client.FetchBlob(FakeRef(bs.server.host() + "/x:v"), {"", Sha256Digest(kBlob), kBlob.size()},
                       {}, dest, [](uint64_t) { return false; });
  CHECK(s.code() == absl::StatusCode::kCancelled);
  CHECK_FALSE(std::filesystem::exists(dest));
}

TEST_CASE(
    "manifests: index followed, digest mismatch DataLoss, oversize InvalidArgument, 5xx "
    "Unavailable") {
  FakeServer reg;
  const std::string body = Manifest(Sha256Digest(kBlob), kBlob.size());
  const std::string index = absl::StrCat(
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)",
      R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")",
      "sha256:" + std::string(64, 'a'),
      R"(","size":9,"platform":{"os":"linux","architecture":"arm64"}},)",
      R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")", Sha256Digest(body),
      R"(","size":9,"platform":{"os":"linux","architecture":"amd64"}}]})");
  reg.svr.Get(R"(/v2/x/manifests/(.*))", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string ref = req.matches[1];
    if (ref == "big") {
      res.set_content(std::string(5u << 20, ' '), std::string(kOciManifestType));
    } else if (ref == "broken") {
      res.status = 503;
      res.set_content("maintenance", "text/plain");
    } else if (ref == "multi") {
      res.set_content(index, std::string(kOciIndexType));
    } else if (ref == "lying") {
      res.set_header("Docker-Content-Digest", "sha256:" + std::string(64, 'e'));
      res.set_content(body, std::string(kOciManifestType));
    } else {
      res.set_content(body, std::string(kOciManifestType));
    }
  });
  reg.Start();
  RegistryClient client(PlainHttp(reg));
  const std::string other = "sha256:" + std::string(64, 'd');
  auto mismatch = client.Resolve(FakeRef(reg.host() + "/x@" + other), {});
  CHECK(mismatch.status().code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(mismatch.status().message()), Catch::Contains(Sha256Digest(body)));
  CHECK(client.Resolve(FakeRef(reg.host() + "/x:lying"), {}).status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(client.Resolve(FakeRef(reg.host() + "/x@" + Sha256Digest(body)), {}).ok());
  auto multi = client.Resolve(FakeRef(reg.host() + "/x:multi"), {});
  REQUIRE(multi.ok());
  CHECK(multi->digest == Sha256Digest(index));
  CHECK(multi->manifest_digest == Sha256Digest(body));
  CHECK(multi->manifest.layers.size() == 1);
  auto big = client.Resolve(FakeRef(reg.host() + "/x:big"), {});
  CHECK(big.status().code() == absl::StatusCode::kInvalidArgument);
  auto broken = client.Resolve(FakeRef(reg.host() + "/x:broken"), {});
  CHECK(broken.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(broken.status().message()), Catch::Contains("maintenance"));
}

TEST_CASE("a registry nobody listens on is Unavailable") {
  const std::string host = "127.0.0.1:" + std::to_string(neuron::testing::FreeLoopbackPort());
  RegistryOptions opts;
  opts.plain_http = {host};
  RegistryClient client(opts);
  auto r = client.Resolve(FakeRef(host + "/x:v"), {});
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("refused"));
}

}  // namespace
}  // namespace neuron::cache
