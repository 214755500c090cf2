// File: lib/cache/registry_auth.cc
#include "lib/cache/registry_auth.h"

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace neuron::cache {
namespace {

using nlohmann::json;

// "https://host:5000/v1/" -> "host:5000"; docker.io's aliases -> "docker.io".
std::string NormalizeHost(absl::string_view key) {
  absl::ConsumePrefix(&key, "https://") || absl::ConsumePrefix(&key, "http://");
  key = key.substr(0, key.find('/'));
  std::string host = absl::AsciiStrToLower(key);
  if (host == "index.docker.io" || host == "registry-1.docker.io") return "docker.io";
  return host;
}

absl::StatusOr<Credentials> ReadEntry(const json& entry, absl::string_view key) {
  const std::string where = absl::StrCat("docker config entry \"", key.substr(0, 100), "\"");
  if (!entry.is_object()) return absl::InvalidArgumentError(where + " is not an object");
  auto auth = entry.find("auth");
  if (auth != entry.end() && auth->is_string() && !auth->get<std::string>().empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(auth->get<std::string>(), &decoded)) {
      return absl::InvalidArgumentError(where + ": \"auth\" is not base64");
    }
    const size_t colon = decoded.find(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(where + ": \"auth\" does not decode to user:password");
    }
    return Credentials{decoded.substr(0, colon), decoded.substr(colon + 1)};
  }
  auto user = entry.find("username");
  auto pass = entry.find("password");
  if (user != entry.end() && user->is_string() && pass != entry.end() && pass->is_string()) {
    return Credentials{user->get<std::string>(), pass->get<std::string>()};
  }
  return absl::InvalidArgumentError(
      where +
      " has neither \"auth\" nor \"username\" and \"password\" (identity tokens are not "
      "supported)");
}

}  // namespace

absl::StatusOr<std::optional<Credentials>> LookupDockerConfig(std::string_view text,
                                                              std::string_view host_in) {
  const absl::string_view registry_host(host_in.data(), host_in.size());
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("docker config: not a JSON object");
  }
  auto auths = j.find("auths");
  if (auths == j.end()) return std::nullopt;
  if (!auths->is_object()) {
    return absl::InvalidArgumentError("docker config: auths is not an object");
  }
  // An exact key wins over one that only matches once normalised.
  if (auto exact = auths->find(std::string(registry_host)); exact != auths->end()) {
    return ReadEntry(*exact, registry_host);
  }
  const std::string want = NormalizeHost(registry_host);
  for (const auto& [key, entry] : auths->items()) {
    if (NormalizeHost(key) == want) return ReadEntry(entry, key);
  }
  return std::nullopt;
}

namespace {

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

absl::string_view TakeToken(absl::string_view& s) {
  size_t n = 0;
  while (n < s.size() && IsTokenChar(s[n])) ++n;
  absl::string_view tok = s.substr(0, n);
  s.remove_prefix(n);
  return tok;
}

// s starts after the opening quote; consumes through the closing one.
absl::StatusOr<std::string> TakeQuoted(absl::string_view& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out.push_back(s[++i]);
    } else if (s[i] == '"') {
      s.remove_prefix(i + 1);
      return out;
    } else {
      out.push_back(s[i]);
    }
  }
  return absl::InvalidArgumentError("WWW-Authenticate: unterminated quoted string");
}

}  // namespace

absl::StatusOr<AuthChallenge> ParseAuthChallenge(std::string_view header_in) {
  const absl::string_view header(header_in.data(), header_in.size());
  absl::string_view s = absl::StripAsciiWhitespace(header);
  AuthChallenge c;
  c.scheme = absl::AsciiStrToLower(TakeToken(s));
  if (c.scheme.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("WWW-Authenticate: no scheme in \"", header.substr(0, 200), "\""));
  }
  c.scheme[0] = absl::ascii_toupper(static_cast<unsigned char>(c.scheme[0]));
  while (true) {
    s = absl::StripLeadingAsciiWhitespace(s);
    while (absl::ConsumePrefix(&s, ",")) s = absl::StripLeadingAsciiWhitespace(s);
    if (s.empty()) break;
    absl::string_view rest = s;
    const std::string key = absl::AsciiStrToLower(TakeToken(rest));
    rest = absl::StripLeadingAsciiWhitespace(rest);
    // A token not followed by '=' starts the next challenge: we use only the first.
    if (key.empty() || !absl::ConsumePrefix(&rest, "=")) break;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    std::string value;
    if (absl::ConsumePrefix(&rest, "\"")) {
      absl::StatusOr<std::string> q = TakeQuoted(rest);
      if (!q.ok()) return q.status();
      value = *std::move(q);
    } else {
      value = std::string(TakeToken(rest));
    }
    c.params[key] = std::move(value);
    s = rest;
  }
  return c;
}

std::string BasicAuthorization(const Credentials& creds) {
  return "Basic " + absl::Base64Escape(absl::StrCat(creds.username, ":", creds.password));
}

}  // namespace neuron::cache
