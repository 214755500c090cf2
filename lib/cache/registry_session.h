// File: lib/cache/registry_session.h
// Authenticated GETs against one registry, per the distribution spec: try anonymously; on 401
// answer the WWW-Authenticate challenge (Basic: resend with the credentials; Bearer: fetch a pull
// token from the realm and resend with it); remember what worked per (registry, repository) for
// the session's lifetime. Follows redirects itself, dropping Authorization when the host changes
// (registries redirect blob downloads to object storage that must not see registry credentials).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lib/cache/registry_auth.h"
#include "lib/cache/registry_http.h"

namespace neuron::cache {

using CredentialLookup =
    std::function<std::optional<Credentials>(const std::string& registry_host)>;

// The status for a non-2xx answer: 401/403 PermissionDenied, 404 NotFound, 408/429/5xx
// Unavailable, anything else FailedPrecondition. `what` names the object ("manifest latest").
absl::Status HttpStatusError(const HttpResponse& r, absl::string_view host, absl::string_view repo,
                             absl::string_view what);

class RegistrySession {
 public:
  explicit RegistrySession(HttpTransportOptions transport) : transport_(std::move(transport)) {}

  // GET `req` (a URL on the registry `host`) for `repo`. Credentials are looked up by `host`
  // only when the registry asks. Returns the final response, whatever its status, except that a
  // refusal after authenticating is PermissionDenied; transport failures are Unavailable.
  absl::StatusOr<HttpResponse> Get(const std::string& host, const std::string& repo,
                                   HttpRequest req, const CredentialLookup& creds);

 private:
  absl::StatusOr<std::string> Authorize(const std::string& host, const std::string& repo,
                                        const HttpResponse& unauthorized,
                                        const CredentialLookup& creds);
  absl::StatusOr<std::string> FetchToken(const std::string& host, const std::string& repo,
                                         const AuthChallenge& challenge,
                                         const std::optional<Credentials>& creds);
  absl::StatusOr<HttpResponse> FollowRedirects(HttpRequest req, HttpResponse r);

  const HttpTransportOptions transport_;
  absl::Mutex mu_;
  std::map<std::string, std::string> authorization_ ABSL_GUARDED_BY(mu_);  // origin|repo -> header
};

}  // namespace neuron::cache
