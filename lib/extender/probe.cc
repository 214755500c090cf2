// File: lib/extender/probe.cc
// ProbeLocal (app.h): the kubelet's exec probe runs inside the container's network namespace,
// the one place besides kube-scheduler's container that reaches the loopback listener.
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "lib/extender/app.h"
#include "lib/httpserver/http_server.h"

namespace neuron::extender {

absl::Status ProbeLocal(const std::string& listen, const std::string& path) {
  absl::StatusOr<std::pair<std::string, int>> addr = httpserver::ParseListenAddress(listen);
  if (!addr.ok()) return addr.status();
  std::string host = addr->first;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  httplib::Client client(host, addr->second);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(2, 0);
  httplib::Result r = client.Get(path.c_str());
  if (!r) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, " on ", listen, ": ", httplib::to_string(r.error())));
  }
  if (r->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, " on ", listen, ": HTTP ", r->status, " ", r->body));
  }
  return absl::OkStatus();
}

}  // namespace neuron::extender
