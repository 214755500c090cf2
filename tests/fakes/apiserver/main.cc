// File: tests/fakes/apiserver/main.cc
// fake-apiserver --listen 127.0.0.1:PORT [--log-level debug] [--preload cluster.ndjson]
// Serves the in-memory fake kube-apiserver until SIGTERM/SIGINT.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "lib/base/logging.h"
#include "lib/base/process_init.h"
#include "lib/base/signals.h"
#include "spdlog/spdlog.h"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace {
constexpr char kUsage[] =
    "usage: fake-apiserver [--listen HOST:PORT] [--log-level LEVEL] [--preload FILE]\n"
    "  --listen     address to serve on (default 127.0.0.1:0, a free port)\n"
    "  --log-level  trace, debug, info (default), warn, error\n"
    "  --preload    NDJSON file, one object per line (apiVersion, kind, metadata.name), loaded\n"
    "               before serving; namespaces it names are created\n";
}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess();
  absl::Notification& shutdown = neuron::ShutdownOnSignals();
  std::string listen = "127.0.0.1:0";
  std::string level = "info";
  std::string preload;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) {
      listen = argv[++i];
    } else if (a.rfind("--listen=", 0) == 0) {
      listen = a.substr(9);
    } else if (a == "--log-level" && i + 1 < argc) {
      level = argv[++i];
    } else if (a.rfind("--log-level=", 0) == 0) {
      level = a.substr(12);
    } else if (a == "--preload" && i + 1 < argc) {
      preload = argv[++i];
    } else if (a.rfind("--preload=", 0) == 0) {
      preload = a.substr(10);
    } else if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--tls-cert" || a == "--tls-key") {
      std::fprintf(stderr, "fake-apiserver: TLS is not supported by this build\n");
      return 2;
    } else {
      std::fprintf(stderr, "fake-apiserver: unknown or incomplete flag %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (auto s = neuron::InitLogging("fake-apiserver", level); !s.ok()) {
    std::fprintf(stderr, "fake-apiserver: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port)) {
    spdlog::error("invalid --listen value={}", listen);
    return 2;
  }
  neuron::fakes::FakeApiServer server;
  if (!preload.empty()) {
    std::ifstream in(preload);
    if (!in) {
      std::fprintf(stderr, "fake-apiserver: cannot open --preload file %s\n", preload.c_str());
      return 2;
    }
    if (auto s = server.Preload(in); !s.ok()) {
      std::fprintf(stderr, "fake-apiserver: --preload %s: %s\n", preload.c_str(),
                   std::string(s.message()).c_str());
      return 2;
    }
    spdlog::info("preloaded file={} resourceVersion={}", preload, server.ResourceVersion());
  }
  if (auto s = server.Start(listen.substr(0, colon), port); !s.ok()) {
    spdlog::error("start failed error={}", std::string(s.message()));
    return 1;
  }
  spdlog::info("listening on {}", server.url());
  shutdown.WaitForNotification();
  spdlog::info("shutting down");
  server.Stop();
  return 0;
}
