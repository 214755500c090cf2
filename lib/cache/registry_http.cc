// File: lib/cache/registry_http.cc
#include "lib/cache/registry_http.h"

#include <httplib.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace neuron::cache {
namespace {

constexpr size_t kMaxErrorBody = 64 << 10;

// The system store plus the admin's extra bundle; httplib's own CA path option would replace the
// system store instead of adding to it.
absl::StatusOr<X509_STORE*> CaStore(const std::string& ca_file) {
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr) return absl::ResourceExhaustedError("cannot allocate a certificate store");
  X509_STORE_set_default_paths(store);
  if (X509_STORE_load_locations(store, ca_file.c_str(), nullptr) != 1) {
    X509_STORE_free(store);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load CA bundle ", ca_file, " (missing or not PEM certificates)"));
  }
  return store;
}

absl::StatusOr<std::unique_ptr<httplib::Client>> NewClient(const HttpTransportOptions& opts,
                                                           const HttpUrl& url) {
  auto cli = std::make_unique<httplib::Client>(url.Origin());
  if (!cli->is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot make an HTTP client for ", url.Origin()));
  }
  if (url.tls) {
    cli->enable_server_certificate_verification(true);
    if (!opts.ca_file.empty()) {
      absl::StatusOr<X509_STORE*> store = CaStore(opts.ca_file);
      if (!store.ok()) return store.status();
      cli->set_ca_cert_store(*store);  // the client's SSL_CTX owns it from here
    }
  }
  const int64_t connect_us = absl::ToInt64Microseconds(opts.connect_timeout);
  const int64_t stall_us = absl::ToInt64Microseconds(opts.stall_timeout);
  cli->set_connection_timeout(connect_us / 1000000, connect_us % 1000000);
  cli->set_read_timeout(stall_us / 1000000, stall_us % 1000000);
  cli->set_write_timeout(stall_us / 1000000, stall_us % 1000000);
  cli->set_decompress(false);
  cli->set_follow_location(false);  // the registry client follows redirects itself
  cli->set_keep_alive(false);
  return cli;
}

std::string TransportError(const HttpUrl& url, httplib::Client& cli, httplib::Error err,
                           absl::Duration since_last_byte, absl::Duration stall, uint64_t got) {
  std::string why = httplib::to_string(err);
  if (err == httplib::Error::SSLServerVerification) {
    why = absl::StrCat("TLS certificate verification failed: ",
                       X509_verify_cert_error_string(cli.get_openssl_verify_result()),
                       " (is the registry's CA in the CA file?)");
  } else if (err == httplib::Error::Connection) {
    why = "connection refused or host unreachable";
  } else if (err == httplib::Error::ConnectionTimeout) {
    why = "connection timed out";
  } else if (err == httplib::Error::Read && since_last_byte >= stall * 0.9) {
    why = absl::StrCat("stalled: no data for ", absl::FormatDuration(since_last_byte), " after ",
                       got, " bytes");
  } else if (err == httplib::Error::Read) {
    why = absl::StrCat("read failed after ", got, " bytes (connection closed early?)");
  }
  return absl::StrCat("GET ", url.Origin(), url.target, ": ", why);
}

}  // namespace

std::string HttpUrl::Origin() const {
  return absl::StrCat(tls ? "https://" : "http://", host_port);
}

absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url, const HttpUrl* base) {
  HttpUrl out;
  if (base != nullptr && absl::StartsWith(url, "/") && !absl::StartsWith(url, "//")) {
    out = *base;
    out.target = std::string(url);
    return out;
  }
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "https://")) {
    out.tls = true;
  } else if (absl::ConsumePrefix(&rest, "http://")) {
    out.tls = false;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("URL \"", url.substr(0, 200), "\" is not http(s)://host/path"));
  }
  const size_t slash = rest.find_first_of("/?");
  out.host_port = std::string(rest.substr(0, slash));
  out.target = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (out.target.front() == '?') out.target.insert(0, "/");
  if (out.host_port.empty() || out.host_port.find_first_of("@ \t") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("URL \"", url.substr(0, 200), "\" has no host"));
  }
  return out;
}

absl::StatusOr<HttpResponse> HttpGet(const HttpTransportOptions& opts, const HttpRequest& req) {
  absl::StatusOr<std::unique_ptr<httplib::Client>> cli = NewClient(opts, req.url);
  if (!cli.ok()) return cli.status();
  httplib::Headers headers;
  if (!req.authorization.empty()) headers.emplace("Authorization", req.authorization);
  if (!req.accept.empty()) headers.emplace("Accept", req.accept);
  HttpResponse out;
  absl::Status sink_status;
  absl::Time last_byte = absl::Now();
  uint64_t got = 0;
  auto on_response = [&](const httplib::Response& r) {
    out.status = r.status;
    out.content_type = r.get_header_value("Content-Type");
    out.location = r.get_header_value("Location");
    out.www_authenticate = r.get_header_value("WWW-Authenticate");
    out.docker_content_digest = r.get_header_value("Docker-Content-Digest");
    return true;
  };
  auto on_data = [&](const char* data, size_t n) {
    last_byte = absl::Now();
    got += n;
    const bool success = out.status >= 200 && out.status < 300;
    if (success && req.sink) {
      sink_status = req.sink(absl::string_view(data, n));
      return sink_status.ok();
    }
    if (!success && out.body.size() >= kMaxErrorBody) return true;  // drop the rest
    if (success && out.body.size() + n > req.max_body) {
      sink_status = absl::InvalidArgumentError(
          absl::StrCat("GET ", req.url.Origin(), req.url.target, ": response body larger than ",
                       req.max_body, " bytes"));
      return false;
    }
    out.body.append(data, n);
    return true;
  };
  std::optional<httplib::Result> res;
  try {
    res.emplace((*cli)->Get(req.url.target, headers, on_response, on_data));
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("GET ", req.url.Origin(), req.url.target, ": ", e.what()));
  }
  if (!sink_status.ok()) return sink_status;
  if (res->error() != httplib::Error::Success) {
    return absl::UnavailableError(TransportError(req.url, **cli, res->error(),
                                                 absl::Now() - last_byte, opts.stall_timeout, got));
  }
  return out;
}

}  // namespace neuron::cache
