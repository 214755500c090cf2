// cpp-httplib based HTTP(S) transport. Only this file includes httplib.h.
#include "lib/k8s/transport.h"

#include <netdb.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "httplib.h"
#include "lib/base/status_macros.h"
#include "spdlog/spdlog.h"

namespace neuron::k8s {

void StreamCanceller::Cancel() {
  cancelled_.store(true);
  absl::MutexLock lock(&mu_);
  if (on_cancel_) on_cancel_();
}

void StreamCanceller::SetOnCancel(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  on_cancel_ = std::move(fn);
  if (cancelled_.load() && on_cancel_) on_cancel_();
}

void StreamCanceller::ClearOnCancel() {
  absl::MutexLock lock(&mu_);
  on_cancel_ = nullptr;
}

std::string RedactHeader(absl::string_view name, absl::string_view value) {
  if (absl::EqualsIgnoreCase(name, "authorization")) {
    const auto sp = value.find(' ');
    return absl::StrCat(sp == absl::string_view::npos ? "" : value.substr(0, sp + 1), "<redacted>");
  }
  return std::string(value);
}

namespace {

struct ServerUrl {
  bool tls = false;
  std::string host;
  int port = 0;
  std::string prefix;  // path prefix, no trailing slash
};

absl::StatusOr<ServerUrl> ParseServer(const std::string& server) {
  ServerUrl u;
  absl::string_view rest = server;
  if (absl::ConsumePrefix(&rest, "https://")) {
    u.tls = true;
  } else if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat("server URL must be http(s): ", server));
  }
  const auto slash = rest.find('/');
  absl::string_view hostport = rest.substr(0, slash);
  if (slash != absl::string_view::npos) {
    u.prefix = std::string(rest.substr(slash));
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  }
  absl::string_view port_part;
  if (absl::ConsumePrefix(&hostport, "[")) {  // IPv6 literal
    const auto close = hostport.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("bad IPv6 server URL");
    u.host = std::string(hostport.substr(0, close));
    port_part = hostport.substr(close + 1);
    absl::ConsumePrefix(&port_part, ":");
  } else {
    const auto colon = hostport.rfind(':');
    u.host = std::string(hostport.substr(0, colon));
    if (colon != absl::string_view::npos) port_part = hostport.substr(colon + 1);
  }
  if (u.host.empty()) return absl::InvalidArgumentError(absl::StrCat("no host in ", server));
  u.port = u.tls ? 443 : 80;
  if (!port_part.empty() &&
      (!absl::SimpleAtoi(port_part, &u.port) || u.port <= 0 || u.port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("bad port in ", server));
  }
  return u;
}

std::string ResolveIp(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return host;
  char buf[NI_MAXHOST];
  std::string ip = host;
  if (getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof(buf), nullptr, 0, NI_NUMERICHOST) ==
      0) {
    ip = buf;
  }
  freeaddrinfo(res);
  return ip;
}

// PEM bundle -> a fresh X509_STORE (ownership passes to httplib).
X509_STORE* StoreFromPem(const std::string& pem, int* count) {
  X509_STORE* store = X509_STORE_new();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  *count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++*count;
    X509_free(cert);
  }
  BIO_free(bio);
  return store;
}

class HttpTransport final : public Transport {
 public:
  HttpTransport(ClientConfig cfg, ServerUrl url, TransportOptions opts)
      : cfg_(std::move(cfg)), url_(std::move(url)), opts_(std::move(opts)) {}

  absl::StatusOr<HttpResponse> Do(const HttpRequest& req) override {
    for (int attempt = 0;; ++attempt) {
      NEURON_ASSIGN_OR_RETURN(Credentials creds, GetCredentials());
      NEURON_ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> cli, Borrow(creds));
      cli->set_read_timeout(absl::ToInt64Seconds(opts_.read_timeout));
      httplib::Request r;
      Prepare(req, creds, r);
      auto res = cli->send(r);
      if (!res) {
        const auto err = res.error();
        return absl::UnavailableError(absl::StrCat("k8s transport: ", req.method, " ", req.path,
                                                   ": ", httplib::to_string(err)));
      }
      Return(std::move(cli));
      HttpResponse out = ToResponse(*res);
      if (out.status == 401 && attempt == 0 && cfg_.credentials) {
        spdlog::info("k8s unauthorized, refreshing credentials path={}", req.path);
        cfg_.credentials->Invalidate();
        continue;
      }
      return out;
    }
  }

  absl::StatusOr<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<bool(absl::string_view)>& on_data,
                                      StreamCanceller* cancel) override {
    NEURON_ASSIGN_OR_RETURN(Credentials creds, GetCredentials());
    NEURON_ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> cli, NewClient(creds));
    cli->set_read_timeout(absl::ToInt64Seconds(opts_.stream_read_timeout));
    httplib::ClientImpl* raw = cli.get();
    if (cancel) cancel->SetOnCancel([raw] { raw->stop(); });
    HttpResponse head;
    bool stopped_by_handler = false;
    httplib::Request r;
    Prepare(req, creds, r);
    r.response_handler = [&](const httplib::Response& res) {
      head.status = res.status;
      head.retry_after = res.get_header_value("Retry-After");
      head.content_type = res.get_header_value("Content-Type");
      return true;
    };
    r.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (head.status < 200 || head.status >= 300) {
        if (head.body.size() < (1u << 20)) head.body.append(data, n);
        return true;
      }
      if (!on_data(absl::string_view(data, n))) {
        stopped_by_handler = true;
        return false;
      }
      return true;
    };
    auto res = cli->send(r);
    if (cancel) cancel->ClearOnCancel();
    if (!res) {
      if (stopped_by_handler || (cancel && cancel->cancelled())) {
        return absl::CancelledError("k8s stream stopped");
      }
      return absl::UnavailableError(
          absl::StrCat("k8s stream: ", req.path, ": ", httplib::to_string(res.error())));
    }
    if (res->status == 401 && cfg_.credentials) cfg_.credentials->Invalidate();
    return head;
  }

 private:
  absl::StatusOr<Credentials> GetCredentials() {
    if (!cfg_.credentials) return Credentials{};
    return cfg_.credentials->Get();
  }

  void Prepare(const HttpRequest& req, const Credentials& creds, httplib::Request& r) {
    r.method = req.method;
    r.path = url_.prefix + req.path;
    r.headers.emplace("Accept", "application/json");
    r.headers.emplace("User-Agent", opts_.user_agent);
    if (!creds.token.empty()) r.headers.emplace("Authorization", "Bearer " + creds.token);
    for (const auto& [k, v] : req.headers) r.headers.emplace(k, v);
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
      r.body = req.body;
      r.headers.emplace("Content-Type",
                        req.content_type.empty() ? "application/json" : req.content_type);
    }
    spdlog::trace("k8s request method={} path={}", r.method, r.path);
  }

  static HttpResponse ToResponse(const httplib::Response& res) {
    HttpResponse out;
    out.status = res.status;
    out.body = res.body;
    out.retry_after = res.get_header_value("Retry-After");
    out.content_type = res.get_header_value("Content-Type");
    return out;
  }

  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> Borrow(const Credentials& creds) {
    {
      absl::MutexLock lock(&mu_);
      if (creds.client_cert_pem != pool_cert_) {  // rotated client cert: drop old connections
        pool_.clear();
        pool_cert_ = creds.client_cert_pem;
      }
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return c;
      }
    }
    return NewClient(creds);
  }

  void Return(std::unique_ptr<httplib::ClientImpl> cli) {
    absl::MutexLock lock(&mu_);
    if (pool_.size() < 8) pool_.push_back(std::move(cli));
  }

  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> NewClient(const Credentials& creds) {
    std::unique_ptr<httplib::ClientImpl> cli;
    if (!url_.tls) {
      cli = std::make_unique<httplib::ClientImpl>(url_.host, url_.port);
    } else {
      const std::string name = cfg_.tls_server_name.empty() ? url_.host : cfg_.tls_server_name;
      std::unique_ptr<httplib::SSLClient> ssl;
      if (!creds.client_cert_pem.empty()) {
        BIO* cb = BIO_new_mem_buf(creds.client_cert_pem.data(),
                                  static_cast<int>(creds.client_cert_pem.size()));
        X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
        BIO_free(cb);
        BIO* kb = BIO_new_mem_buf(creds.client_key_pem.data(),
                                  static_cast<int>(creds.client_key_pem.size()));
        EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
        BIO_free(kb);
        if (!cert || !key) {
          X509_free(cert);
          EVP_PKEY_free(key);
          return absl::InvalidArgumentError("k8s transport: cannot parse client certificate/key");
        }
        ssl = std::make_unique<httplib::SSLClient>(name, url_.port, cert, key);
        X509_free(cert);  // the SSL_CTX holds its own references
        EVP_PKEY_free(key);
        if (!ssl->is_valid()) {
          return absl::InvalidArgumentError("k8s transport: client certificate/key mismatch");
        }
      } else {
        ssl = std::make_unique<httplib::SSLClient>(name, url_.port);
      }
      if (name != url_.host) ssl->set_hostname_addr_map({{name, ResolveIp(url_.host)}});
      if (!cfg_.ca_pem.empty()) {
        int n = 0;
        X509_STORE* store = StoreFromPem(cfg_.ca_pem, &n);
        if (n == 0) {
          X509_STORE_free(store);
          return absl::InvalidArgumentError("k8s transport: no certificate in CA data");
        }
        ssl->set_ca_cert_store(store);
      }
      ssl->enable_server_certificate_verification(!cfg_.insecure_skip_tls_verify);
      cli = std::move(ssl);
    }
    cli->set_connection_timeout(absl::ToInt64Seconds(opts_.connect_timeout));
    cli->set_write_timeout(absl::ToInt64Seconds(opts_.read_timeout));
    cli->set_keep_alive(true);
    cli->set_tcp_nodelay(true);
    cli->set_decompress(true);
    return cli;
  }

  ClientConfig cfg_;
  const ServerUrl url_;
  const TransportOptions opts_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<httplib::ClientImpl>> pool_ ABSL_GUARDED_BY(mu_);
  std::string pool_cert_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::shared_ptr<Transport>> NewHttpTransport(const ClientConfig& cfg,
                                                            TransportOptions opts) {
  NEURON_ASSIGN_OR_RETURN(ServerUrl url, ParseServer(cfg.server));
  return std::shared_ptr<Transport>(std::make_shared<HttpTransport>(cfg, url, std::move(opts)));
}

absl::StatusOr<std::shared_ptr<Transport>> NewTransport(const ClientConfig& cfg,
                                                        TransportOptions topts,
                                                        RetryOptions ropts) {
  NEURON_ASSIGN_OR_RETURN(std::shared_ptr<Transport> http, NewHttpTransport(cfg, std::move(topts)));
  return std::shared_ptr<Transport>(std::make_shared<RetryingTransport>(http, ropts));
}

}  // namespace neuron::k8s
