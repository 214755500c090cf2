// File: lib/cache/registry_auth.h
// Registry credentials and challenges: the kubernetes.io/dockerconfigjson secret format the
// cluster admin already has for image pulls, and the WWW-Authenticate header a registry answers
// 401 with (distribution token auth spec).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::cache {

struct Credentials {
  std::string username;
  std::string password;
};

// `json` is the ".dockerconfigjson" value, already base64-decoded:
// {"auths":{"host:port":{"auth":"base64(user:pass)"} | {"username":..,"password":..}}}.
// Keys may also be written "https://host/v1/"; the docker.io aliases (index.docker.io,
// registry-1.docker.io) match each other. nullopt when no entry is for `registry_host`;
// InvalidArgument for malformed JSON or a matching entry we cannot read.
absl::StatusOr<std::optional<Credentials>> LookupDockerConfig(std::string_view json,
                                                              std::string_view registry_host);

// WWW-Authenticate: `Basic realm=".."` | `Bearer realm="..",service="..",scope=".."`.
// The scheme is returned as "Basic"/"Bearer" (any case accepted); parameter names lowercased.
struct AuthChallenge {
  std::string scheme;
  std::map<std::string, std::string> params;
};
absl::StatusOr<AuthChallenge> ParseAuthChallenge(std::string_view header);

// "Basic base64(user:pass)" for an Authorization header.
std::string BasicAuthorization(const Credentials& creds);

}  // namespace neuron::cache
