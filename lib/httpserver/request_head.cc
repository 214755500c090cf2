// File: lib/httpserver/request_head.cc
#include "lib/httpserver/request_head.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace neuron::httpserver {
namespace {

// Debian's Abseil has its own string_view type: these take ours.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(absl::string_view(a.data(), a.size()),
                                absl::string_view(b.data(), b.size()));
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `each` with every `sep`-separated piece of `s` (empty ones included).
template <typename F>
void ForEachPiece(std::string_view s, char sep, F each) {
  while (true) {
    const size_t at = s.find(sep);
    each(s.substr(0, at));
    if (at == std::string_view::npos) return;
    s.remove_prefix(at + 1);
  }
}

// RFC 9110 token characters (method and field names).
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// Field values may hold visible characters, spaces, tabs and obs-text; never CR, LF or NUL.
bool IsFieldValue(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<RequestHead> Fail(HeadError* error, int status, std::string reason) {
  *error = HeadError{status, std::move(reason)};
  return std::nullopt;
}

// "close" / "keep-alive" among a Connection header's comma-separated options.
bool HasConnectionOption(std::string_view value, std::string_view option) {
  bool found = false;
  ForEachPiece(value, ',', [&](std::string_view token) {
    found = found || EqualsIgnoreCase(TrimSpace(token), option);
  });
  return found;
}

// Splits the request target into path and query; accepts origin-form ("/p?q") and
// absolute-form ("http://host/p?q"), which servers must accept too.
bool SplitTarget(std::string_view target, RequestHead* head) {
  if (EqualsIgnoreCase(target.substr(0, 7), "http://") ||
      EqualsIgnoreCase(target.substr(0, 8), "https://")) {
    const size_t authority = target.find("//") + 2;
    const size_t slash = target.find_first_of("/?", authority);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    if (target.front() == '?') return false;
  }
  if (target.empty() || target.front() != '/') return false;
  const size_t q = target.find('?');
  head->path = PercentDecode(target.substr(0, q), false);
  if (q == std::string_view::npos) return true;
  ForEachPiece(target.substr(q + 1), '&', [head](std::string_view pair) {
    if (pair.empty()) return;
    const size_t eq = pair.find('=');
    std::string key = PercentDecode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true);
    head->query.emplace(std::move(key), std::move(value));
  });
  return true;
}

bool ParseRequestLine(std::string_view line, RequestHead* head, HeadError* error) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    *error = {400, "malformed request line"};
    return false;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) {
    *error = {400, "malformed method"};
    return false;
  }
  if (version.size() != 8 || !version.starts_with("HTTP/") || version[6] != '.' ||
      !absl::ascii_isdigit(static_cast<unsigned char>(version[5])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(version[7]))) {
    *error = {400, "malformed HTTP version"};
    return false;
  }
  if (version[5] != '1') {
    *error = {505, "only HTTP/1.x is served"};
    return false;
  }
  head->method = std::string(method);
  head->minor_version = version[7] - '0';
  head->keep_alive = head->minor_version >= 1;
  if (!SplitTarget(target, head)) {
    *error = {400, "malformed request target"};
    return false;
  }
  return true;
}

// Applies the fields that decide how the body is read and the connection kept.
bool ApplyFramingFields(RequestHead* head, HeadError* error) {
  std::optional<size_t> length;
  for (const auto& [name, value] : head->headers) {
    if (EqualsIgnoreCase(name, "Content-Length")) {
      size_t n = 0;
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
          !absl::SimpleAtoi(absl::string_view(value), &n) || (length && *length != n)) {
        *error = {400, "malformed Content-Length"};
        return false;
      }
      length = n;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      if (!EqualsIgnoreCase(value, "chunked") || head->chunked) {
        *error = {501, "only the chunked transfer coding is supported"};
        return false;
      }
      head->chunked = true;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      if (HasConnectionOption(value, "close")) head->keep_alive = false;
      if (HasConnectionOption(value, "keep-alive") && head->minor_version == 0) {
        head->keep_alive = true;
      }
    } else if (EqualsIgnoreCase(name, "Expect")) {
      head->expect_continue = EqualsIgnoreCase(value, "100-continue");
    }
  }
  // Both framings at once is how requests are smuggled past proxies: refuse it.
  if (head->chunked && length) {
    *error = {400, "both Content-Length and Transfer-Encoding"};
    return false;
  }
  head->content_length = length.value_or(0);
  return true;
}

}  // namespace

size_t FindHeadEnd(std::string_view buf) {
  const size_t at = buf.find("\r\n\r\n");
  return at == std::string_view::npos ? at : at + 4;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::optional<RequestHead> ParseRequestHead(std::string_view head, HeadError* error) {
  if (head.size() > kMaxHeadBytes) return Fail(error, 431, "request head too large");
  if (!head.ends_with("\r\n\r\n")) return Fail(error, 400, "incomplete request head");
  head.remove_suffix(2);  // the blank line; every remaining line ends with CRLF
  // RFC 9112 2.2: a server should ignore empty lines received before the request line.
  while (head.starts_with("\r\n")) head.remove_prefix(2);
  RequestHead out;
  const size_t line_end = head.find("\r\n");
  if (line_end == std::string_view::npos) return Fail(error, 400, "incomplete request head");
  if (!ParseRequestLine(head.substr(0, line_end), &out, error)) return std::nullopt;
  std::string_view rest = head.substr(line_end + 2);
  while (!rest.empty()) {
    const size_t end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 2);
    if (out.headers.size() == kMaxHeaderFields) return Fail(error, 431, "too many header fields");
    const size_t colon = line.find(':');
    // No whitespace before the colon, and no obsolete line folding (RFC 9112 5.1, 5.2).
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Fail(error, 400, "malformed header field");
    }
    const std::string_view value = TrimSpace(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Fail(error, 400, "malformed header field value");
    out.headers.emplace(std::string(line.substr(0, colon)), std::string(value));
  }
  if (!ApplyFramingFields(&out, error)) return std::nullopt;
  return out;
}

ChunkedState DecodeChunked(std::string_view buf, size_t max_body, std::string* body,
                           size_t* consumed) {
  body->clear();
  size_t pos = 0;
  while (true) {
    const size_t line_end = buf.find("\r\n", pos);
    if (line_end == std::string_view::npos) {
      return buf.size() - pos > 1024 ? ChunkedState::kInvalid : ChunkedState::kIncomplete;
    }
    // chunk-size [; extensions]: extensions are allowed and ignored.
    std::string_view size_text = buf.substr(pos, line_end - pos);
    size_text = size_text.substr(0, size_text.find(';'));
    size_text = TrimSpace(size_text);
    if (size_text.empty() || size_text.size() > 15) return ChunkedState::kInvalid;
    size_t size = 0;
    for (char c : size_text) {
      const int v = HexValue(c);
      if (v < 0) return ChunkedState::kInvalid;
      size = size * 16 + static_cast<size_t>(v);
    }
    pos = line_end + 2;
    if (size == 0) break;
    if (size > max_body - body->size()) return ChunkedState::kTooLarge;
    if (buf.size() - pos < size + 2) return ChunkedState::kIncomplete;
    if (buf.substr(pos + size, 2) != "\r\n") return ChunkedState::kInvalid;
    body->append(buf.substr(pos, size));
    pos += size + 2;
  }
  // Trailer fields, then the blank line.
  while (true) {
    const size_t line_end = buf.find("\r\n", pos);
    if (line_end == std::string_view::npos) {
      return buf.size() - pos > kMaxHeadBytes ? ChunkedState::kInvalid : ChunkedState::kIncomplete;
    }
    const bool blank = line_end == pos;
    pos = line_end + 2;
    if (blank) break;
  }
  *consumed = pos;
  return ChunkedState::kComplete;
}

}  // namespace neuron::httpserver
