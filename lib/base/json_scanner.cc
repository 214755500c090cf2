// File: lib/base/json_scanner.cc
#include "lib/base/json_scanner.h"

#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lib/base/json_plain_run.h"

namespace neuron {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Bytes that end the fast path through a string: the quote, a backslash, control characters.
constexpr std::array<bool, 256> kStringStop = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

constexpr uint32_t kReplacement = 0xFFFD;  // what Go substitutes for a lone surrogate

}  // namespace

JsonScanner::JsonScanner(std::string_view text, int max_depth)
    : text_(text), max_depth_(max_depth) {}

absl::Status JsonScanner::error() const {
  if (error_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(error_, " at byte ", error_at_));
}

bool JsonScanner::Fail(std::string_view what) {
  if (error_.empty()) {
    error_ = what.empty() ? "invalid JSON" : std::string(what);
    error_at_ = pos_;
  }
  pos_ = text_.size();  // nothing more is read once an error is recorded
  return false;
}

void JsonScanner::SkipSpace() {
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
}

bool JsonScanner::Expect(char c, std::string_view what) {
  SkipSpace();
  if (pos_ >= text_.size()) return Fail("unexpected end of JSON, expected " + std::string(what));
  if (text_[pos_] != c) return Fail("expected " + std::string(what));
  ++pos_;
  return true;
}

bool JsonScanner::Peek(Type* type) {
  if (!ok()) return false;
  SkipSpace();
  if (pos_ >= text_.size()) return Fail("unexpected end of JSON, expected a value");
  switch (text_[pos_]) {
    case '{':
      *type = Type::kObject;
      return true;
    case '[':
      *type = Type::kArray;
      return true;
    case '"':
      *type = Type::kString;
      return true;
    case 't':
    case 'f':
      *type = Type::kBool;
      return true;
    case 'n':
      *type = Type::kNull;
      return true;
    default:
      if (text_[pos_] == '-' || IsDigit(text_[pos_])) {
        *type = Type::kNumber;
        return true;
      }
      return Fail("expected a JSON value");
  }
}

bool JsonScanner::ConsumeNull() {
  Type t;
  if (!Peek(&t) || t != Type::kNull) return false;
  return ScanLiteral("null");
}

bool JsonScanner::Push() {
  if (static_cast<int>(first_.size()) >= max_depth_) {
    return Fail(absl::StrCat("JSON nested deeper than ", max_depth_, " levels"));
  }
  first_.push_back(true);
  return true;
}

bool JsonScanner::EnterObject() {
  if (!ok()) return false;
  return Expect('{', "an object") && Push();
}

bool JsonScanner::EnterArray() {
  if (!ok()) return false;
  return Expect('[', "an array") && Push();
}

bool JsonScanner::NextMember(std::string_view* key) {
  if (!ok()) return false;
  if (first_.empty()) return Fail("NextMember outside an object");
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == '}') {  // "{}" or the end after a member
    ++pos_;
    first_.pop_back();
    return false;
  }
  if (!first_.back()) {
    if (!Expect(',', "',' or '}' in an object")) return false;
    SkipSpace();
  }
  first_.back() = false;
  if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a member name string");
  std::string_view name;
  if (!ScanString(&name, /*keep=*/true)) return false;
  if (!Expect(':', "':' after a member name")) return false;
  if (key) *key = name;
  return true;
}

bool JsonScanner::NextItem() {
  if (!ok()) return false;
  if (first_.empty()) return Fail("NextItem outside an array");
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == ']') {
    ++pos_;
    first_.pop_back();
    return false;
  }
  if (!first_.back() && !Expect(',', "',' or ']' in an array")) return false;
  first_.back() = false;
  return true;
}

// Long on purpose: the hot loop of every list and watch (runs of plain bytes, then one
// branch per escape form); split, the fast path would be interleaved with calls.
bool JsonScanner::ScanString(std::string_view* decoded, bool keep) {
  ++pos_;  // opening quote, checked by the caller
  const size_t start = pos_;
  const size_t n = text_.size();
  pos_ = SkipPlainJsonWords(text_, pos_, JsonSpecials::kDecode);
  while (pos_ < n && !kStringStop[static_cast<unsigned char>(text_[pos_])]) ++pos_;
  if (pos_ >= n) return Fail("unterminated string");
  if (text_[pos_] == '"') {  // no escapes: a view into the text
    if (keep) *decoded = text_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }
  std::string& out = scratch_;
  out.clear();
  if (keep) out.append(text_.substr(start, pos_ - start));
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      if (keep) *decoded = out;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
    if (c != '\\') {
      if (keep) out.push_back(c);
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= n) return Fail("unterminated string");
    const char e = text_[pos_ + 1];
    pos_ += 2;
    char simple = 0;
    switch (e) {
      case '"':
        simple = '"';
        break;
      case '\\':
        simple = '\\';
        break;
      case '/':
        simple = '/';
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        break;
      default:
        pos_ -= 2;
        return Fail("invalid escape in a string");
    }
    if (simple) {
      if (keep) out.push_back(simple);
      continue;
    }
    auto hex4 = [&](uint32_t* cp) {
      if (pos_ + 4 > n) return false;
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) {
        const int h = HexValue(text_[pos_ + i]);
        if (h < 0) return false;
        v = v * 16 + static_cast<uint32_t>(h);
      }
      pos_ += 4;
      *cp = v;
      return true;
    };
    uint32_t cp = 0;
    if (!hex4(&cp)) return Fail("invalid \\u escape in a string");
    if (cp >= 0xD800 && cp < 0xDC00) {  // high surrogate: a low one must follow to pair
      uint32_t low = 0;
      if (pos_ + 1 < n && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
        const size_t before = pos_;
        pos_ += 2;
        if (!hex4(&low)) return Fail("invalid \\u escape in a string");
        if (low >= 0xDC00 && low < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else {
          pos_ = before;  // not a pair: the next escape is decoded on its own
          cp = kReplacement;
        }
      } else {
        cp = kReplacement;
      }
    } else if (cp >= 0xDC00 && cp < 0xE000) {
      cp = kReplacement;
    }
    if (keep) AppendUtf8(cp, &out);
  }
  return Fail("unterminated string");
}

bool JsonScanner::ScanNumber(std::string_view* text) {
  const size_t start = pos_;
  const size_t n = text_.size();
  if (pos_ < n && text_[pos_] == '-') ++pos_;
  if (pos_ >= n || !IsDigit(text_[pos_])) return Fail("invalid number");
  if (text_[pos_] == '0') {
    ++pos_;
  } else {
    while (pos_ < n && IsDigit(text_[pos_])) ++pos_;
  }
  if (pos_ < n && text_[pos_] == '.') {
    ++pos_;
    if (pos_ >= n || !IsDigit(text_[pos_])) return Fail("invalid number");
    while (pos_ < n && IsDigit(text_[pos_])) ++pos_;
  }
  if (pos_ < n && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < n && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (pos_ >= n || !IsDigit(text_[pos_])) return Fail("invalid number");
    while (pos_ < n && IsDigit(text_[pos_])) ++pos_;
  }
  *text = text_.substr(start, pos_ - start);
  return true;
}

bool JsonScanner::ScanLiteral(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
  pos_ += word.size();
  return true;
}

bool JsonScanner::ReadStringView(std::string_view* out) {
  Type t;
  if (!Peek(&t)) return false;
  if (t != Type::kString) return Fail("expected a string");
  return ScanString(out, /*keep=*/true);
}

bool JsonScanner::ReadString(std::string* out) {
  std::string_view v;
  if (!ReadStringView(&v)) return false;
  out->assign(v);
  return true;
}

bool JsonScanner::ReadBool(bool* out) {
  Type t;
  if (!Peek(&t)) return false;
  if (t != Type::kBool) return Fail("expected true or false");
  *out = text_[pos_] == 't';
  return ScanLiteral(*out ? "true" : "false");
}

bool JsonScanner::ReadInt64(int64_t* out) {
  Type t;
  if (!Peek(&t)) return false;
  if (t != Type::kNumber) return Fail("expected an integer");
  const size_t start = pos_;
  std::string_view num;
  if (!ScanNumber(&num)) return false;
  const bool negative = num.front() == '-';
  uint64_t magnitude = 0;
  for (char c : num.substr(negative ? 1 : 0)) {
    if (!IsDigit(c)) {
      pos_ = start;
      return Fail("expected an integer, got a fraction or exponent");
    }
    const auto digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      pos_ = start;
      return Fail("integer out of range");
    }
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) {
    pos_ = start;
    return Fail("integer out of range");
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool JsonScanner::Skip(std::string_view* raw) {
  Type t;
  if (!Peek(&t)) return false;
  const size_t start = pos_;
  bool good = true;
  switch (t) {
    case Type::kObject:
      good = EnterObject();
      while (good && NextMember(nullptr)) good = Skip();
      break;
    case Type::kArray:
      good = EnterArray();
      while (good && NextItem()) good = Skip();
      break;
    case Type::kString: {
      std::string_view unused;
      good = ScanString(&unused, /*keep=*/false);
      break;
    }
    case Type::kNumber: {
      std::string_view unused;
      good = ScanNumber(&unused);
      break;
    }
    case Type::kBool:
      good = ScanLiteral(text_[pos_] == 't' ? "true" : "false");
      break;
    case Type::kNull:
      good = ScanLiteral("null");
      break;
  }
  if (!good || !ok()) return false;
  if (raw) *raw = text_.substr(start, pos_ - start);
  return true;
}

bool JsonScanner::AtEnd() {
  if (!ok()) return false;
  SkipSpace();
  return pos_ == text_.size();
}

}  // namespace neuron
