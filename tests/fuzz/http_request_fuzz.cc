// Fuzz target for lib/httpserver/request_head.h, what our HTTP server parses off the socket: the
// input is raw request bytes, as a client would send them. Besides "never crash", checks that
// an accepted head keeps its promises (a limit-sized head, a known status on refusal, one
// framing) and that a complete chunked body decodes within its cap and its own length.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/httpserver/request_head.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace neuron::httpserver;  // NOLINT(google-build-using-namespace): a harness
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t head_end = FindHeadEnd(input);
  if (head_end == std::string_view::npos) return 0;
  HeadError error{};
  const auto head = ParseRequestHead(input.substr(0, head_end), &error);
  if (!head) {
    const int s = error.status;
    if ((s != 400 && s != 431 && s != 501 && s != 505) || error.reason.empty()) std::abort();
    return 0;
  }
  if (head->method.empty() || head->path.empty() || head->path.front() != '/') std::abort();
  if (head->headers.size() > kMaxHeaderFields) std::abort();
  if (head->chunked && head->content_length != 0) std::abort();
  if (head->chunked) {
    constexpr size_t kCap = 4096;
    std::string body;
    size_t consumed = 0;
    const std::string_view rest = input.substr(head_end);
    if (DecodeChunked(rest, kCap, &body, &consumed) == ChunkedState::kComplete) {
      if (body.size() > kCap || consumed > rest.size() || body.size() > consumed) std::abort();
    }
  }
  return 0;
}
