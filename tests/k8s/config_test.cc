// Unit tests: kubeconfig, in-cluster config, exec credentials, errors, conditions, paths.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "lib/k8s/conditions.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/exec_credential.h"
#include "lib/k8s/incluster.h"
#include "lib/k8s/k8s_time.h"
#include "lib/k8s/kubeconfig.h"
#include "lib/k8s/resource.h"
#include "tests/fakes/fake_clock.h"
#include "tests/k8s/test_util.h"

namespace neuron::k8s {
namespace {

using testutil::TempDir;
using testutil::WriteFile;

// base64("CA-PEM") etc.
const char kGoodConfig[] = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: Q0EtUEVN
    tls-server-name: api.internal
- name: c2
  cluster:
    server: http://127.0.0.1:8080
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    token: abc123
- name: u2
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team}
- name: other
  context: {cluster: c2, user: u2}
)";

TEST_CASE("kubeconfig: current context and override", "[kubeconfig]") {
  auto cfg = ParseKubeconfig(kGoodConfig);
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://10.0.0.1:6443");
  CHECK(cfg->ca_pem == "CA-PEM");
  CHECK(cfg->tls_server_name == "api.internal");
  CHECK(cfg->default_namespace == "team");
  REQUIRE(cfg->credentials);
  CHECK(cfg->credentials->Get()->token == "abc123");

  auto other = ParseKubeconfig(kGoodConfig, {.context = "other"});
  REQUIRE(other.ok());
  CHECK(other->server == "http://127.0.0.1:8080");
  CHECK(other->insecure_skip_tls_verify);
  CHECK(other->default_namespace == "default");
  CHECK(other->credentials->Get()->client_cert_pem == "CERT");
  CHECK(other->credentials->Get()->client_key_pem == "KEY");

  auto missing = ParseKubeconfig(kGoodConfig, {.context = "nope"});
  CHECK(missing.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(missing.status().message()).find("nope") != std::string::npos);
}

TEST_CASE("kubeconfig: bad fields are named", "[kubeconfig]") {
  std::string bad = kGoodConfig;
  bad.replace(bad.find("S0VZ"), 4, "S0V@!");
  auto r = ParseKubeconfig(bad, {.context = "other"});
  REQUIRE(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()) ==
        "kubeconfig: users[1].user.client-key-data: invalid base64");

  // Truncated mid-way: the users and contexts lists are gone.
  std::string truncated(kGoodConfig, std::string(kGoodConfig).find("- name: u1"));
  r = ParseKubeconfig(truncated);
  REQUIRE(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()) == "kubeconfig: contexts: no entry named \"dev\"");
  // Truncated inside a user entry.
  truncated =
      std::string(kGoodConfig).substr(0, std::string(kGoodConfig).find("    client-key-data"));
  truncated += "contexts: [{name: dev, context: {cluster: c1, user: u2}}]\n";
  r = ParseKubeconfig(truncated);
  CHECK(std::string(r.status().message()) ==
        "kubeconfig: users[1].user: client certificate and key must be given together");

  r = ParseKubeconfig("clusters: [\n  - {name: x");  // broken YAML
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  r = ParseKubeconfig("");
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  r = ParseKubeconfig(
      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
      "clusters: [{name: c, cluster: {server: ftp://x}}]\n");
  CHECK(std::string(r.status().message()).find("clusters[0].cluster.server") != std::string::npos);
  r = ParseKubeconfig(
      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
      "clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: maybe}}]\n");
  CHECK(std::string(r.status().message()).find("insecure-skip-tls-verify") != std::string::npos);
}

TEST_CASE("kubeconfig: files relative to the kubeconfig, tokenFile", "[kubeconfig]") {
  TempDir dir;
  WriteFile(dir.path() + "/ca.pem", "FILE-CA");
  WriteFile(dir.path() + "/tok", "tok-1\n");
  WriteFile(dir.path() + "/config",
            "current-context: a\n"
            "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority: ca.pem}}]\n"
            "users: [{name: u, user: {tokenFile: tok}}]\n");
  fakes::FakeClock clock;
  auto cfg = LoadKubeconfig(dir.path() + "/config", {.clock = &clock});
  REQUIRE(cfg.ok());
  CHECK(cfg->ca_pem == "FILE-CA");
  CHECK(cfg->credentials->Get()->token == "tok-1");
  CHECK(LoadKubeconfig(dir.path() + "/absent").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("base64 decoding", "[kubeconfig]") {
  CHECK(*DecodeBase64("aGVsbG8=") == "hello");
  CHECK(*DecodeBase64("aGVsbG8") == "hello");
  CHECK(*DecodeBase64("aGVs\nbG8=") == "hello");
  CHECK(!DecodeBase64("aGVsbG8=x").ok());
  CHECK(!DecodeBase64("a").ok());
  CHECK(!DecodeBase64("a$==").ok());
  // Whitespace anywhere (wrapped PEM, CRLF, indentation) is ignored.
  CHECK(*DecodeBase64("aGVs\r\n  bG8=\n") == "hello");
  CHECK(*DecodeBase64("\taGVs bG8\n") == "hello");
  CHECK(*DecodeBase64("") == "");
  CHECK(*DecodeBase64("YQ==") == "a");
  CHECK(*DecodeBase64("+/8=") == "\xfb\xff");
  CHECK(!DecodeBase64("-_8=").ok());       // URL-safe alphabet is not what kubeconfig uses
  CHECK(!DecodeBase64("YQ=").ok());        // partial padding
  CHECK(!DecodeBase64("aGVsbG8==").ok());  // too much padding
  CHECK(!DecodeBase64("aGV=sbG8").ok());   // data after padding
}

TEST_CASE("in-cluster config from a directory; token re-read as it rotates", "[incluster]") {
  TempDir dir;
  WriteFile(dir.path() + "/token", "t1");
  WriteFile(dir.path() + "/ca.crt", "CA");
  WriteFile(dir.path() + "/namespace", "kube-system\n");
  fakes::FakeClock clock;
  InClusterOptions o{.dir = dir.path(), .host = "10.96.0.1", .port = "443", .clock = &clock};
  auto cfg = InClusterConfig(o);
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://10.96.0.1:443");
  CHECK(cfg->ca_pem == "CA");
  CHECK(cfg->default_namespace == "kube-system");
  CHECK(cfg->credentials->Get()->token == "t1");
  WriteFile(dir.path() + "/token", "t2");
  CHECK(cfg->credentials->Get()->token == "t1");  // cached for a minute
  clock.Advance(absl::Seconds(61));
  CHECK(cfg->credentials->Get()->token == "t2");
  WriteFile(dir.path() + "/token", "t3");
  cfg->credentials->Invalidate();  // as after a 401
  CHECK(cfg->credentials->Get()->token == "t3");

  o.host = "fd00::1";
  CHECK(InClusterConfig(o)->server == "https://[fd00::1]:443");
  InClusterOptions none{.dir = dir.path() + "/nope", .host = "h", .port = "1", .clock = &clock};
  CHECK(InClusterConfig(none).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("exec credential parsing", "[exec]") {
  auto st = ParseExecCredential(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1",
          "status":{"token":"k8s-aws-v1.abc","expirationTimestamp":"2030-01-02T03:04:05Z"}})",
      "client.authentication.k8s.io/v1beta1");
  REQUIRE(st.ok());
  CHECK(st->token == "k8s-aws-v1.abc");
  REQUIRE(st->expiration);
  CHECK(FormatRfc3339(*st->expiration) == "2030-01-02T03:04:05Z");
  CHECK(!ParseExecCredential("{", "").ok());
  CHECK(!ParseExecCredential(R"({"kind":"ExecCredential","status":{}})", "").ok());
  CHECK(!ParseExecCredential(
             R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",
                 "status":{"token":"x"}})",
             "client.authentication.k8s.io/v1beta1")
             .ok());
}

TEST_CASE("exec credential plugin runs with args, env and KUBERNETES_EXEC_INFO", "[exec]") {
  TempDir dir;
  const std::string script = testutil::WriteExecPlugin(dir.path(), "2030-01-01T00:00:00Z");
  fakes::FakeClock clock(*ParseTime("2029-12-31T23:00:00Z"));
  ExecConfig cfg{.api_version = "client.authentication.k8s.io/v1",
                 .command = script,
                 .args = {"--flag", "tok-A"},
                 .env = {{"PLUGIN_SUFFIX", "-sfx"}},
                 .provide_cluster_info = true,
                 .cluster_server = "https://k8s:6443"};
  cfg.cluster_ca_pem = "CA-PEM1";  // length not a multiple of 3: padded
  ExecCredentialProvider p(cfg, clock);
  auto c = p.Get();
  REQUIRE(c.ok());
  CHECK(c->token == "tok-A-sfx-1");        // arg + env + run number
  CHECK(p.Get()->token == "tok-A-sfx-1");  // cached until expiry
  CHECK(p.runs() == 1);
  std::string info = testutil::ReadFile(dir.path() + "/exec_info");
  CHECK(info.find("\"server\":\"https://k8s:6443\"") != std::string::npos);
  CHECK(info.find("client.authentication.k8s.io/v1") != std::string::npos);
  CHECK(info.find("\"certificate-authority-data\":\"Q0EtUEVNMQ==\"") != std::string::npos);
  clock.Advance(absl::Hours(2));  // past expirationTimestamp
  CHECK(p.Get()->token == "tok-A-sfx-2");
  p.Invalidate();  // 401
  CHECK(p.Get()->token == "tok-A-sfx-3");

  ExecConfig failing = cfg;
  failing.command = "/bin/false";
  ExecCredentialProvider bad(failing, clock);
  CHECK(bad.Get().status().code() == absl::StatusCode::kUnauthenticated);
}

TEST_CASE("HTTP errors map to absl codes keeping reason and message", "[errors]") {
  auto s = StatusFromHttp(
      409,
      R"({"kind":"Status","status":"Failure","reason":"Conflict","message":"stale","code":409})");
  CHECK(s.code() == absl::StatusCode::kAborted);
  CHECK(IsConflict(s));
  CHECK(K8sReason(s) == "Conflict");
  CHECK(std::string(s.message()).find("stale") != std::string::npos);
  CHECK(StatusFromHttp(409, R"({"kind":"Status","reason":"AlreadyExists"})").code() ==
        absl::StatusCode::kAlreadyExists);
  CHECK(IsExpired(StatusFromHttp(410, R"({"kind":"Status","reason":"Expired"})")));
  CHECK(IsExpired(StatusFromHttp(410, "not json")));
  CHECK(IsExpired(StatusFromWatchError(R"({"kind":"Status","code":410,"reason":"Gone"})")));
  CHECK(StatusFromHttp(404, "").code() == absl::StatusCode::kNotFound);
  CHECK(StatusFromHttp(403, "").code() == absl::StatusCode::kPermissionDenied);
  CHECK(StatusFromHttp(401, "").code() == absl::StatusCode::kUnauthenticated);
  CHECK(StatusFromHttp(422, "").code() == absl::StatusCode::kInvalidArgument);
  CHECK(StatusFromHttp(400, "").code() == absl::StatusCode::kInvalidArgument);
  auto busy = StatusFromHttp(429, "", "7");
  CHECK(busy.code() == absl::StatusCode::kUnavailable);
  CHECK(RetryAfterSeconds(busy) == 7);
  CHECK(StatusFromHttp(503, "").code() == absl::StatusCode::kUnavailable);
  CHECK(StatusFromHttp(200, "").ok());
}

TEST_CASE("resource paths", "[rest]") {
  CHECK(ResourcePath(resources::kPods, "ns", "p", "status") ==
        "/api/v1/namespaces/ns/pods/p/status");
  CHECK(ResourcePath(resources::kNodes, "ignored", "n1") == "/api/v1/nodes/n1");
  CHECK(ResourcePath(resources::kLeases, "kube-system") ==
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
  CHECK(ResourcePath(resources::kPods, "") == "/api/v1/pods");
  CHECK(QueryEscape("a=b,c!=d") == "a%3Db%2Cc%21%3Dd");
}

TEST_CASE("time formats", "[time]") {
  const absl::Time t = absl::FromUnixMicros(1700000000123456);
  CHECK(FormatMicroTime(t) == "2023-11-14T22:13:20.123456Z");
  CHECK(FormatRfc3339(t) == "2023-11-14T22:13:20Z");
  CHECK(*ParseTime("2023-11-14T22:13:20.123456Z") == t);
  CHECK(!ParseTime("yesterday").ok());
}

TEST_CASE("conditions: transition time changes only with status", "[conditions]") {
  nlohmann::json conds;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  Condition c{.type = "Ready", .status = "False", .reason = "Deploying", .message = "m"};
  CHECK(*SetCondition(conds, c, t0));
  c.message = "still";
  CHECK(*SetCondition(conds, c, t0 + absl::Seconds(5)));
  CHECK(FindCondition(conds, "Ready")->last_transition_time == t0);
  CHECK_FALSE(*SetCondition(conds, c, t0 + absl::Seconds(6)));
  c.status = "True";
  c.reason = "Ready";
  CHECK(*SetCondition(conds, c, t0 + absl::Seconds(10)));
  CHECK(FindCondition(conds, "Ready")->last_transition_time == t0 + absl::Seconds(10));
  CHECK(IsConditionTrue(conds, "Ready"));
  CHECK(conds.size() == 1);
  CHECK(RemoveCondition(conds, "Ready"));
  CHECK(conds.empty());

  CHECK(ValidateCondition({.type = "example.com/Ready", .status = "True", .reason = "A_b:c"}).ok());
  CHECK(!ValidateCondition({.type = "Ready", .status = "Yes", .reason = "A"}).ok());
  CHECK(!ValidateCondition({.type = "Ready", .status = "True", .reason = "1bad"}).ok());
  CHECK(!ValidateCondition({.type = "Ready", .status = "True", .reason = "bad,"}).ok());
  CHECK(!ValidateCondition({.type = "Ready", .status = "True", .reason = ""}).ok());
  CHECK(!ValidateCondition({.type = "Bad_Host/Ready", .status = "True", .reason = "A"}).ok());
  CHECK(!ValidateCondition({.type = "", .status = "True", .reason = "A"}).ok());
}

}  // namespace
}  // namespace neuron::k8s
