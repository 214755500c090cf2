// File: lib/httpserver/request_head.h
// The parsing half of our HTTP/1.1 server (RFC 9112): the request head (request line and
// header fields, up to the blank line) and a chunked body. Pure functions over bytes already
// read, so they are unit-tested and fuzzed apart from the sockets. Errors carry the status the
// server answers with before it closes the connection.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace neuron::httpserver {

struct RequestHead {
  std::string method;
  std::string path;                                 // percent-decoded, without the query
  std::multimap<std::string, std::string> query;    // decoded; '+' is a space
  std::multimap<std::string, std::string> headers;  // names as sent, values without padding
  int minor_version = 1;                            // HTTP/1.<minor_version>
  size_t content_length = 0;
  bool chunked = false;          // Transfer-Encoding: chunked (then no Content-Length)
  bool keep_alive = true;        // what the client asked for the connection after this request
  bool expect_continue = false;  // Expect: 100-continue
};

struct HeadError {
  int status;  // 400, 431, 501 or 505
  std::string reason;
};

// Limits on one head: a longer head or more fields than this is answered 431.
inline constexpr size_t kMaxHeadBytes = 64 << 10;
inline constexpr size_t kMaxHeaderFields = 100;

// The index just past the blank line that ends the head in `buf`, or npos while incomplete.
size_t FindHeadEnd(std::string_view buf);

// Parses `head` (as FindHeadEnd delimits it). On failure returns nullopt and fills `error`.
std::optional<RequestHead> ParseRequestHead(std::string_view head, HeadError* error);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`); a malformed escape is kept
// as written.
std::string PercentDecode(std::string_view s, bool plus_is_space);

enum class ChunkedState { kIncomplete, kComplete, kInvalid, kTooLarge };

// Decodes the chunked body at the start of `buf` into `body`; on kComplete, `consumed` is its
// length in `buf` (trailer fields included, and ignored). kTooLarge once the decoded body
// would pass `max_body`.
ChunkedState DecodeChunked(std::string_view buf, size_t max_body, std::string* body,
                           size_t* consumed);

}  // namespace neuron::httpserver
