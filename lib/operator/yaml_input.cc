// File: lib/operator/yaml_input.cc
#include "lib/operator/yaml_input.h"

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// Bounds on hostile input: nesting (a document thousands deep, or an alias that contains
// itself) and total size after aliases are expanded (a few lines of `&a [*a, *a]` anchors
// expand to billions of nodes: the "billion laughs" document).
constexpr int kMaxDepth = 256;
constexpr size_t kMaxNodes = 1'000'000;

// Hand-written scanners, not std::regex: libstdc++'s regex recurses per character, and a plain
// scalar of a few hundred KB (a long digit string) would overflow the stack.
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Digits from `i`; returns the index after them.
size_t SkipDigits(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

size_t SkipSign(std::string_view s) { return !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0; }

// [-+]?[0-9]+
bool IsInt(std::string_view s) {
  const size_t start = SkipSign(s);
  const size_t end = SkipDigits(s, start);
  return end > start && end == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloat(std::string_view s) {
  size_t i = SkipSign(s);
  if (i < s.size() && s[i] == '.') {
    const size_t end = SkipDigits(s, i + 1);
    if (end == i + 1) return false;
    i = end;
  } else {
    const size_t end = SkipDigits(s, i);
    if (end == i) return false;
    i = end;
    if (i < s.size() && s[i] == '.') i = SkipDigits(s, i + 1);
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t end = SkipDigits(s, i);
    if (end == i) return false;
    i = end;
  }
  return i == s.size();
}

json Scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() != "?") return s;  // quoted or explicitly tagged: a string as written
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (IsInt(s)) {
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == 0) return v;
    return s;  // out of range: keep the text rather than lose digits
  }
  if (IsFloat(s)) return std::strtod(s.c_str(), nullptr);
  return s;
}

absl::StatusOr<json> Convert(const YAML::Node& n, int depth, size_t& budget) {
  if (depth > kMaxDepth) return absl::InvalidArgumentError("YAML nested too deeply");
  if (budget == 0) {
    return absl::InvalidArgumentError("YAML expands to too many nodes (aliases?)");
  }
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return Scalar(n);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : n) {
        absl::StatusOr<json> v = Convert(item, depth + 1, budget);
        if (!v.ok()) return v.status();
        out.push_back(std::move(*v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) return absl::InvalidArgumentError("YAML map key is not a string");
        absl::StatusOr<json> v = Convert(kv.second, depth + 1, budget);
        if (!v.ok()) return v.status();
        out[kv.first.Scalar()] = std::move(*v);
      }
      return out;
    }
  }
  return json(nullptr);
}

// yaml-cpp 0.7 (bookworm) has a parser that can stall: when the next token cannot start a
// document (a ',' first, or after a flow collection or quoted scalar at the top: `{},`), it
// reports an empty document without consuming the token, again and again, and YAML::LoadAll
// collects those until memory runs out. This pass walks the documents by events alone (cheap:
// nothing is built) and stops where a document starts at the same place as the one before.
class DocumentStarts : public YAML::EventHandler {
 public:
  bool stalled() const { return stalled_; }
  const YAML::Mark& last() const { return last_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stalled_ = seen_any_ && mark.pos <= last_.pos;
    seen_any_ = true;
    last_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool seen_any_ = false;
  bool stalled_ = false;
  YAML::Mark last_ = YAML::Mark::null_mark();
};

// Throws YAML::Exception for input the parser rejects, as LoadAll would.
absl::Status CheckDocumentsAdvance(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    if (starts.stalled()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid YAML at line ", starts.last().line + 1, ", column ", starts.last().column + 1,
          ": unexpected text after the end of a document (a stray ','?)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<json>> ParseYamlDocuments(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    if (absl::Status s = CheckDocumentsAdvance(text); !s.ok()) return s;
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
  }
  std::vector<json> out;
  for (const YAML::Node& d : docs) {
    if (d.IsNull()) continue;
    size_t budget = kMaxNodes;
    absl::StatusOr<json> j = Convert(d, 0, budget);
    if (!j.ok()) return j.status();
    out.push_back(std::move(*j));
  }
  return out;
}

}  // namespace neuron::op
