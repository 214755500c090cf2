// File: lib/httpserver/connection.h
// Serves one accepted HTTP/1.1 connection: reads requests (pipelined ones too), hands each to
// the router, writes each answer with one system call (head and body together, so a peer
// never waits on Nagle for the second half), and keeps the connection while the client wants
// it. Sockets are non-blocking; every wait is a poll that also watches the server's stop
// event, so Stop() never waits on an idle client.
#pragma once

#include <cstddef>
#include <functional>

#include "lib/httpserver/http_server.h"

namespace neuron::httpserver {

struct ConnectionLimits {
  size_t max_body_bytes = 8 << 20;
  int read_timeout_ms = 10000;   // for the rest of a request once its first byte came
  int write_timeout_ms = 10000;  // for the client to take the answer
  int idle_timeout_ms = 5000;    // a kept-alive connection with no request in flight
  int max_requests = 100;        // then the connection is closed (Connection: close)
  size_t gzip_min_bytes = 4096;
};

// Routes a parsed request to its handler; answers 404/405 itself and never throws.
using Dispatch = std::function<Response(const Request&)>;

// Serves `fd` (non-blocking) until done and closes it. `stop_fd` becomes readable when the
// server stops: an idle connection is then closed at once, a request in flight is finished.
void ServeConnection(int fd, int stop_fd, const ConnectionLimits& limits, const Dispatch& dispatch);

}  // namespace neuron::httpserver
