// File: lib/base/json_plain_run.h
// Skips the ordinary bytes of a JSON string eight at a time: a 64-bit word is tested for
// every special byte at once (SWAR), so a run of name characters costs one test per word
// instead of a table lookup and a branch per byte. Most of what the scanner reads and the
// encoder writes is such runs (node names, keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace neuron {
namespace json_plain_run_internal {

inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// Nonzero exactly when some byte of `v` equals `b`.
constexpr uint64_t HasByte(uint64_t v, unsigned char b) {
  const uint64_t x = v ^ (kOnes * b);
  return (x - kOnes) & ~x & kHighBits;
}

// Nonzero exactly when some byte of `v` is below `n` (n <= 0x80).
constexpr uint64_t HasByteBelow(uint64_t v, unsigned char n) {
  return (v - kOnes * n) & ~v & kHighBits;
}

}  // namespace json_plain_run_internal

enum class JsonSpecials {
  kDecode,  // what ends a plain run when reading: '"', '\\', control bytes
  kEncode,  // also what our encoder escapes or checks: non-ASCII, '<', '>', '&'
};

// The first index at or after `i` whose word of eight may hold a special byte (or the last
// partial word): never past a special byte, so the caller's byte loop finds it.
inline size_t SkipPlainJsonWords(std::string_view s, size_t i, JsonSpecials specials) {
  using json_plain_run_internal::HasByte;
  using json_plain_run_internal::HasByteBelow;
  using json_plain_run_internal::kHighBits;
  while (i + 8 <= s.size()) {
    uint64_t v = 0;
    std::memcpy(&v, s.data() + i, sizeof(v));
    uint64_t special = HasByteBelow(v, 0x20) | HasByte(v, '"') | HasByte(v, '\\');
    if (specials == JsonSpecials::kEncode) {
      special |= (v & kHighBits) | HasByte(v, '<') | HasByte(v, '>') | HasByte(v, '&');
    }
    if (special != 0) break;
    i += 8;
  }
  return i;
}

}  // namespace neuron
