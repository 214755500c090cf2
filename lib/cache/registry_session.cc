// File: lib/cache/registry_session.cc
#include "lib/cache/registry_session.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/status_macros.h"

namespace neuron::cache {
namespace {

constexpr int kMaxRedirects = 5;

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string Snippet(const std::string& body) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(body).substr(0, 300)));
  return s.empty() ? "" : ": " + s;
}

absl::Status Refused(absl::string_view host, absl::string_view repo, const HttpResponse& r) {
  return absl::PermissionDeniedError(absl::StrCat("registry ", host,
                                                  " refused the credentials for repo ", repo,
                                                  ": HTTP ", r.status, Snippet(r.body)));
}

}  // namespace

absl::Status HttpStatusError(const HttpResponse& r, absl::string_view host, absl::string_view repo,
                             absl::string_view what) {
  if (r.status == 401 || r.status == 403) return Refused(host, repo, r);
  if (r.status == 404) {
    return absl::NotFoundError(
        absl::StrCat("registry ", host, " has no ", what, " in repo ", repo, " (HTTP 404)"));
  }
  const std::string msg = absl::StrCat("registry ", host, " answered HTTP ", r.status, " for ",
                                       what, " in repo ", repo, Snippet(r.body));
  if (r.status == 408 || r.status == 429 || r.status >= 500) return absl::UnavailableError(msg);
  return absl::FailedPreconditionError(msg);
}

absl::StatusOr<HttpResponse> RegistrySession::Get(const std::string& host, const std::string& repo,
                                                  HttpRequest req, const CredentialLookup& creds) {
  const std::string key = absl::StrCat(req.url.Origin(), "|", repo);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = authorization_.find(key); it != authorization_.end()) {
      req.authorization = it->second;
    }
  }
  NEURON_ASSIGN_OR_RETURN(HttpResponse r, HttpGet(transport_, req));
  // A 401 with a remembered authorization means it expired: authorize afresh, once.
  if (r.status == 401) {
    NEURON_ASSIGN_OR_RETURN(std::string auth, Authorize(host, repo, r, creds));
    req.authorization = auth;
    NEURON_ASSIGN_OR_RETURN(r, HttpGet(transport_, req));
    if (r.status == 401 || r.status == 403) return Refused(host, repo, r);
    absl::MutexLock lock(&mu_);
    authorization_[key] = std::move(auth);
  }
  return FollowRedirects(std::move(req), std::move(r));
}

absl::StatusOr<HttpResponse> RegistrySession::FollowRedirects(HttpRequest req, HttpResponse r) {
  for (int hops = 0; IsRedirect(r.status); ++hops) {
    if (hops == kMaxRedirects) {
      return absl::UnavailableError(absl::StrCat("GET ", req.url.Origin(), req.url.target,
                                                 ": more than ", kMaxRedirects, " redirects"));
    }
    NEURON_ASSIGN_OR_RETURN(HttpUrl next, ParseHttpUrl(r.location, &req.url));
    // Registry credentials are for the registry only, never for the storage it redirects to.
    if (next.Origin() != req.url.Origin()) req.authorization.clear();
    req.url = std::move(next);
    NEURON_ASSIGN_OR_RETURN(r, HttpGet(transport_, req));
  }
  return r;
}

absl::StatusOr<std::string> RegistrySession::Authorize(const std::string& host,
                                                       const std::string& repo,
                                                       const HttpResponse& unauthorized,
                                                       const CredentialLookup& creds) {
  if (unauthorized.www_authenticate.empty()) {
    return absl::PermissionDeniedError(absl::StrCat("registry ", host, " answered 401 for repo ",
                                                    repo, " without a WWW-Authenticate challenge"));
  }
  NEURON_ASSIGN_OR_RETURN(AuthChallenge challenge,
                          ParseAuthChallenge(unauthorized.www_authenticate));
  const std::optional<Credentials> c = creds ? creds(host) : std::nullopt;
  if (challenge.scheme == "Bearer") {
    NEURON_ASSIGN_OR_RETURN(std::string token, FetchToken(host, repo, challenge, c));
    return "Bearer " + token;
  }
  if (challenge.scheme != "Basic") {
    return absl::PermissionDeniedError(absl::StrCat("registry ", host, " asks for auth scheme \"",
                                                    challenge.scheme.substr(0, 40),
                                                    "\"; only Basic and Bearer are supported"));
  }
  if (!c) {
    return absl::PermissionDeniedError(absl::StrCat("registry ", host,
                                                    " requires credentials for repo ", repo,
                                                    " and none are configured for it"));
  }
  return BasicAuthorization(*c);
}

absl::StatusOr<std::string> RegistrySession::FetchToken(const std::string& host,
                                                        const std::string& repo,
                                                        const AuthChallenge& challenge,
                                                        const std::optional<Credentials>& creds) {
  auto realm = challenge.params.find("realm");
  if (realm == challenge.params.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("registry ", host, "'s Bearer challenge names no token realm"));
  }
  NEURON_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(realm->second));
  httplib::Params query{{"scope", absl::StrCat("repository:", repo, ":pull")}};
  if (auto service = challenge.params.find("service"); service != challenge.params.end()) {
    query.emplace("service", service->second);
  }
  url.target = httplib::append_query_params(url.target, query);
  HttpRequest req;
  req.url = url;
  req.max_body = 1u << 20;
  if (creds) req.authorization = BasicAuthorization(*creds);
  NEURON_ASSIGN_OR_RETURN(HttpResponse r, HttpGet(transport_, req));
  if (r.status != 200) {
    return HttpStatusError(r, absl::StrCat(host, " (token service ", url.host_port, ")"), repo,
                           "pull token");
  }
  const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  for (const char* field : {"token", "access_token"}) {
    std::string token = StringOf(Member(j, field));
    if (!token.empty()) return token;
  }
  return absl::UnavailableError(absl::StrCat("token service ", url.Origin(), " for registry ", host,
                                             " answered without a token"));
}

}  // namespace neuron::cache
