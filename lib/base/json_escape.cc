// File: lib/base/json_escape.cc
#include "lib/base/json_escape.h"

#include <array>
#include <cstdint>

namespace neuron {
namespace {

// Bytes that leave the plain-copy path: escapes, the HTML-sensitive three, non-ASCII.
constexpr std::array<bool, 256> kSpecial = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  for (int c = 0x80; c < 0x100; ++c) t[c] = true;
  t['"'] = t['\\'] = t['<'] = t['>'] = t['&'] = true;
  return t;
}();

constexpr char kHex[] = "0123456789abcdef";

void AppendUnicodeEscape(std::string& out, uint32_t cp) {
  out += "\\u";
  out += kHex[(cp >> 12) & 0xF];
  out += kHex[(cp >> 8) & 0xF];
  out += kHex[(cp >> 4) & 0xF];
  out += kHex[cp & 0xF];
}

// Length of the valid UTF-8 sequence starting at s[i] (2-4), or 0 if it is not one. Overlong
// forms, surrogates and code points above U+10FFFF are invalid, as in Go's utf8.DecodeRune.
size_t ValidSequence(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF && cont(1)) {
    *cp = ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
    *cp = ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    if (*cp < 0x800 || (*cp >= 0xD800 && *cp < 0xE000)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    *cp = ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    if (*cp < 0x10000 || *cp > 0x10FFFF) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  size_t plain = 0;  // start of the run not yet copied
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!kSpecial[c]) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      uint32_t cp = 0;
      const size_t n = ValidSequence(s, i, &cp);
      if (n > 0 && cp != 0x2028 && cp != 0x2029) {
        i += n;  // valid: stays in the plain run
        continue;
      }
      out.append(s.substr(plain, i - plain));
      if (n > 0) {
        AppendUnicodeEscape(out, cp);
        i += n;
      } else {
        out += "\xEF\xBF\xBD";  // U+FFFD for the one invalid byte
        ++i;
      }
      plain = i;
      continue;
    }
    out.append(s.substr(plain, i - plain));
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        AppendUnicodeEscape(out, c);
        break;
    }
    ++i;
    plain = i;
  }
  out.append(s.substr(plain));
  out += '"';
}

}  // namespace neuron
