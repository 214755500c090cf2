// File: lib/base/json_scanner.h
// A pull scanner over JSON text (RFC 8259) that reads only what its caller asks for and passes
// over the rest without building a tree. Hot paths use it where a DOM costs more than the work:
// a 27 MB NodeList in an extender request, a 96 MB page run of Pods in a list. Everything it
// passes over is validated, and the byte range of a skipped value can be echoed verbatim.
//
// Errors are sticky: the first one stops the scan, every later call returns false, and error()
// names what was wrong and at which byte. Nesting is limited (no recursion beyond max_depth),
// so hostile input cannot exhaust the stack. Never throws.
//
// Usage:
//   JsonScanner s(text);
//   std::string_view key;
//   if (!s.EnterObject()) ...;
//   while (s.NextMember(&key)) {
//     if (key == "name") s.ReadString(&name); else s.Skip();
//   }
//   if (!s.ok()) return s.error();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace neuron {

class JsonScanner {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  explicit JsonScanner(std::string_view text, int max_depth = 128);

  bool ok() const { return error_.empty(); }
  // InvalidArgument naming the problem and its byte offset; OK while ok().
  absl::Status error() const;
  // Byte offset of the next unread character.
  size_t offset() const { return pos_; }

  // Type of the next value (whitespace skipped, nothing consumed). False at end of input or on
  // a character that cannot start a value.
  bool Peek(Type* type);
  // True when the next value is `null`, consuming it.
  bool ConsumeNull();

  // Containers. After EnterObject, call NextMember until it returns false (the closing brace is
  // then consumed); after each true, consume exactly one value (a Read*, Skip or Enter*). The
  // key view is valid until the next call on this scanner. Arrays alike with NextItem.
  bool EnterObject();
  bool NextMember(std::string_view* key);
  bool EnterArray();
  bool NextItem();

  // Scalars. A type mismatch is an error ("expected a string").
  bool ReadString(std::string* out);
  // The string's decoded value; valid until the next call on this scanner.
  bool ReadStringView(std::string_view* out);
  bool ReadBool(bool* out);
  // An integer that fits int64 (no fraction or exponent, as Go decodes into an int64).
  bool ReadInt64(int64_t* out);

  // Passes over one value of any type, validating it. `raw`, if given, receives its exact text.
  bool Skip(std::string_view* raw = nullptr);

  // True when only whitespace remains (call after the top-level value).
  bool AtEnd();

  // Records an error found by the caller (a value of the right type but the wrong meaning), so
  // that error() reports it with the offset. Returns false.
  bool Fail(std::string_view what);

 private:
  void SkipSpace();
  bool Expect(char c, std::string_view what);
  bool ScanString(std::string_view* decoded, bool keep);
  bool ScanNumber(std::string_view* text);
  bool ScanLiteral(std::string_view word);
  bool Push();

  std::string_view text_;
  size_t pos_ = 0;
  const int max_depth_;
  // One entry per open container: whether the next member/item is its first.
  std::vector<bool> first_;
  std::string scratch_;  // decoded strings that had escapes
  std::string error_;
  size_t error_at_ = 0;
};

}  // namespace neuron
