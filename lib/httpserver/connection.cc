// File: lib/httpserver/connection.cc
#include "lib/httpserver/connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/httpserver/gzip.h"
#include "lib/httpserver/request_head.h"

namespace neuron::httpserver {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

bool Compressible(const std::string& content_type) {
  return content_type.rfind("text/", 0) == 0 || content_type.rfind("application/json", 0) == 0;
}

// A response as it goes on the wire: the head, and a view of the body (the handler's own,
// its cached gzip copy, or one compressed here).
struct Encoded {
  std::string head;
  std::string compressed;
  std::string_view body;
};

Encoded Encode(const Response& res, const Request& req, bool keep_alive, size_t gzip_min) {
  Encoded out;
  // Read Accept-Encoding only for an answer that could be compressed: the extender's never is,
  // and kube-scheduler offers gzip on every call.
  const bool could_gzip =
      res.gzip_body || (res.body.size() >= gzip_min && Compressible(res.content_type));
  const bool gzip = could_gzip && AcceptsGzip(req.Header("Accept-Encoding"));
  const char* encoding = nullptr;
  if (gzip && res.gzip_body) {
    out.body = *res.gzip_body;
    encoding = "gzip";
  } else if (gzip && res.body.size() >= gzip_min && Compressible(res.content_type)) {
    out.compressed = GzipCompress(res.body);
    out.body = out.compressed;
    encoding = "gzip";
  } else {
    out.body = res.body;
  }
  absl::StrAppend(&out.head, "HTTP/1.1 ", res.status, " ", ReasonPhrase(res.status),
                  "\r\nContent-Type: ", res.content_type, "\r\nContent-Length: ", out.body.size(),
                  "\r\n");
  if (encoding != nullptr) absl::StrAppend(&out.head, "Content-Encoding: ", encoding, "\r\n");
  if (res.gzip_body || Compressible(res.content_type)) out.head += "Vary: Accept-Encoding\r\n";
  for (const auto& [name, value] : res.headers) {
    absl::StrAppend(&out.head, name, ": ", value, "\r\n");
  }
  absl::StrAppend(&out.head, "Connection: ", keep_alive ? "keep-alive" : "close", "\r\n\r\n");
  if (req.method == "HEAD") out.body = {};
  return out;
}

class Connection {
 public:
  Connection(int fd, int stop_fd, const ConnectionLimits& limits)
      : fd_(fd), stop_fd_(stop_fd), limits_(limits) {}
  ~Connection() { ::close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Serve(const Dispatch& dispatch);

 private:
  enum class Fill { kData, kClosed, kTimeout, kStopped };

  // Appends what the socket holds to buf_, waiting up to `timeout_ms`; `idle`: no request is
  // in flight, so the server's stop ends the wait (and a read is not tried before the poll,
  // since a kept-alive client's next request is rarely there yet).
  Fill FillBuffer(int timeout_ms, bool idle);
  bool ReadHead(size_t* head_end);
  bool ReadBody(const RequestHead& head, size_t head_end, std::string* body, size_t* consumed);
  bool Send(std::string_view head, std::string_view body);
  void SendError(int status, std::string_view reason);

  int fd_, stop_fd_;
  const ConnectionLimits& limits_;
  std::string buf_;  // received, not yet consumed (a pipelined request may follow)
};

Connection::Fill Connection::FillBuffer(int timeout_ms, bool idle) {
  char chunk[64 << 10];
  bool polled = false;
  while (true) {
    if (!idle || polled) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buf_.append(chunk, static_cast<size_t>(n));
        return Fill::kData;
      }
      if (n == 0) return Fill::kClosed;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return Fill::kClosed;
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int ready = ::poll(fds, idle ? 2 : 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Fill::kClosed;
    if (ready == 0) return Fill::kTimeout;
    if (idle && (fds[1].revents & POLLIN) != 0) return Fill::kStopped;
    polled = true;
  }
}

bool Connection::ReadHead(size_t* head_end) {
  while ((*head_end = FindHeadEnd(buf_)) == std::string::npos) {
    if (buf_.size() > kMaxHeadBytes) {
      SendError(431, "request head too large");
      return false;
    }
    const bool idle = buf_.empty();
    const Fill got = FillBuffer(idle ? limits_.idle_timeout_ms : limits_.read_timeout_ms, idle);
    if (got == Fill::kData) continue;
    if (got == Fill::kTimeout && !idle) SendError(408, "request head not received in time");
    return false;
  }
  return true;
}

bool Connection::ReadBody(const RequestHead& head, size_t head_end, std::string* body,
                          size_t* consumed) {
  if (!head.chunked && head.content_length > limits_.max_body_bytes) {
    SendError(413, absl::StrCat("request body over ", limits_.max_body_bytes, " bytes"));
    return false;
  }
  if (head.expect_continue && buf_.size() == head_end &&
      (head.chunked || head.content_length > 0)) {
    if (!Send("HTTP/1.1 100 Continue\r\n\r\n", {})) return false;
  }
  while (true) {
    if (head.chunked) {
      switch (DecodeChunked(std::string_view(buf_).substr(head_end), limits_.max_body_bytes, body,
                            consumed)) {
        case ChunkedState::kComplete:
          *consumed += head_end;
          return true;
        case ChunkedState::kInvalid:
          SendError(400, "malformed chunked body");
          return false;
        case ChunkedState::kTooLarge:
          SendError(413, absl::StrCat("request body over ", limits_.max_body_bytes, " bytes"));
          return false;
        case ChunkedState::kIncomplete:
          break;
      }
    } else if (buf_.size() - head_end >= head.content_length) {
      body->assign(buf_, head_end, head.content_length);
      *consumed = head_end + head.content_length;
      return true;
    }
    const Fill got = FillBuffer(limits_.read_timeout_ms, /*idle=*/false);
    if (got == Fill::kData) continue;
    if (got == Fill::kTimeout) SendError(408, "request body not received in time");
    return false;
  }
}

bool Connection::Send(std::string_view head, std::string_view body) {
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  msghdr msg{};
  msg.msg_iov = parts;
  msg.msg_iovlen = body.empty() ? 1 : 2;
  while (msg.msg_iovlen > 0) {
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd out{fd_, POLLOUT, 0};
      if (::poll(&out, 1, limits_.write_timeout_ms) <= 0) return false;
      continue;
    }
    if (n < 0) return false;
    auto left = static_cast<size_t>(n);
    while (msg.msg_iovlen > 0 && left >= msg.msg_iov[0].iov_len) {
      left -= msg.msg_iov[0].iov_len;
      ++msg.msg_iov;
      --msg.msg_iovlen;
    }
    if (msg.msg_iovlen > 0) {
      msg.msg_iov[0].iov_base = static_cast<char*>(msg.msg_iov[0].iov_base) + left;
      msg.msg_iov[0].iov_len -= left;
    }
  }
  return true;
}

void Connection::SendError(int status, std::string_view reason) {
  const std::string body = std::string(reason) + "\n";
  const std::string head =
      absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status),
                   "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ", body.size(),
                   "\r\nConnection: close\r\n\r\n");
  Send(head, body);
}

void Connection::Serve(const Dispatch& dispatch) {
  for (int served = 0; served < limits_.max_requests; ++served) {
    size_t head_end = 0;
    if (!ReadHead(&head_end)) return;
    HeadError error{};
    std::optional<RequestHead> head =
        ParseRequestHead(std::string_view(buf_).substr(0, head_end), &error);
    if (!head) {
      SendError(error.status, error.reason);
      return;
    }
    Request req;
    size_t consumed = 0;
    if (!ReadBody(*head, head_end, &req.body, &consumed)) return;
    buf_.erase(0, consumed);
    req.method = std::move(head->method);
    req.path = std::move(head->path);
    req.query = std::move(head->query);
    req.headers = std::move(head->headers);
    const Response res = dispatch(req);
    const bool keep_alive = head->keep_alive && served + 1 < limits_.max_requests;
    const Encoded wire = Encode(res, req, keep_alive, limits_.gzip_min_bytes);
    if (!Send(wire.head, wire.body) || !keep_alive) return;
  }
}

}  // namespace

void ServeConnection(int fd, int stop_fd, const ConnectionLimits& limits,
                     const Dispatch& dispatch) {
  Connection(fd, stop_fd, limits).Serve(dispatch);
}

}  // namespace neuron::httpserver
