// File: tests/fakes/apiserver/selectors.cc
#include "tests/fakes/apiserver/selectors.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neuron::fakes::apiserver {
namespace {

// Splits on commas that are not inside parentheses ("a in (x,y),b" -> two terms).
std::vector<std::string> SplitTerms(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::string Trim(absl::string_view s) { return std::string(absl::StripAsciiWhitespace(s)); }

bool ValidKey(const std::string& k) {
  if (k.empty() || k.size() > 316) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(const std::string& text) {
  LabelSelector sel;
  if (Trim(text).empty()) return sel;
  for (const std::string& raw : SplitTerms(text)) {
    std::string term = Trim(raw);
    if (term.empty()) return absl::InvalidArgumentError("empty label selector term");
    Req r;
    size_t pos;
    if (term[0] == '!') {
      r.key = Trim(term.substr(1));
      r.op = Op::kNotExists;
    } else if ((pos = term.find("!=")) != std::string::npos) {
      r.key = Trim(term.substr(0, pos));
      r.op = Op::kNotEq;
      r.values = {Trim(term.substr(pos + 2))};
    } else if ((pos = term.find("==")) != std::string::npos) {
      r.key = Trim(term.substr(0, pos));
      r.op = Op::kEq;
      r.values = {Trim(term.substr(pos + 2))};
    } else if ((pos = term.find('=')) != std::string::npos) {
      r.key = Trim(term.substr(0, pos));
      r.op = Op::kEq;
      r.values = {Trim(term.substr(pos + 1))};
    } else if ((pos = term.find('(')) != std::string::npos) {
      if (term.back() != ')') return absl::InvalidArgumentError("unterminated set in " + term);
      std::vector<std::string> head = absl::StrSplit(term.substr(0, pos), ' ', absl::SkipEmpty());
      if (head.size() != 2 || (head[1] != "in" && head[1] != "notin")) {
        return absl::InvalidArgumentError("invalid set requirement: " + term);
      }
      r.key = head[0];
      r.op = head[1] == "in" ? Op::kIn : Op::kNotIn;
      for (absl::string_view v : absl::StrSplit(term.substr(pos + 1, term.size() - pos - 2), ',')) {
        r.values.push_back(Trim(v));
      }
    } else {
      r.key = term;
      r.op = Op::kExists;
    }
    if (!ValidKey(r.key)) return absl::InvalidArgumentError("invalid label key: " + r.key);
    if (r.key.find(' ') != std::string::npos) {
      return absl::InvalidArgumentError("invalid label key: " + r.key);
    }
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

absl::StatusOr<LabelSelector> LabelSelector::FromObject(const json& selector) {
  if (!selector.is_object()) return absl::InvalidArgumentError("selector is not an object");
  LabelSelector sel;
  const json match_labels = selector.value("matchLabels", json::object());
  if (!match_labels.is_object()) return absl::InvalidArgumentError("matchLabels is not a map");
  for (const auto& [key, value] : match_labels.items()) {
    if (!value.is_string() || !ValidKey(key)) {
      return absl::InvalidArgumentError("invalid matchLabels entry: " + key);
    }
    sel.reqs_.push_back(Req{key, Op::kEq, {value.get<std::string>()}});
  }
  const json exprs = selector.value("matchExpressions", json::array());
  if (!exprs.is_array()) return absl::InvalidArgumentError("matchExpressions is not a list");
  for (const json& e : exprs) {
    if (!e.is_object()) {
      return absl::InvalidArgumentError("matchExpressions entry is not an object");
    }
    Req r;
    r.key = e.value("key", "");
    const std::string op = e.value("operator", "");
    for (const json& v : e.value("values", json::array())) {
      if (!v.is_string()) return absl::InvalidArgumentError("values must be strings");
      r.values.push_back(v.get<std::string>());
    }
    const bool want_values = op == "In" || op == "NotIn";
    if (op == "In" || op == "NotIn" || op == "Exists" || op == "DoesNotExist") {
      r.op = op == "In"       ? Op::kIn
             : op == "NotIn"  ? Op::kNotIn
             : op == "Exists" ? Op::kExists
                              : Op::kNotExists;
    } else {
      return absl::InvalidArgumentError("\"" + op + "\" is not a valid label selector operator");
    }
    if (want_values == r.values.empty()) {
      return absl::InvalidArgumentError(
          want_values ? "for 'in', 'notin' operators, values set can't be empty"
                      : "values set must be empty for exists and does not exist");
    }
    if (!ValidKey(r.key)) return absl::InvalidArgumentError("invalid label key: " + r.key);
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::Matches(const json& labels) const {
  for (const Req& r : reqs_) {
    const bool has = labels.is_object() && labels.contains(r.key) && labels[r.key].is_string();
    const std::string v = has ? labels[r.key].get<std::string>() : "";
    const bool in = std::find(r.values.begin(), r.values.end(), v) != r.values.end();
    bool ok = false;
    switch (r.op) {
      case Op::kEq:
        ok = has && in;
        break;
      case Op::kIn:
        ok = has && in;
        break;
      case Op::kNotEq:
        ok = !has || !in;
        break;
      case Op::kNotIn:
        ok = !has || !in;
        break;
      case Op::kExists:
        ok = has;
        break;
      case Op::kNotExists:
        ok = !has;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<FieldSelector> FieldSelector::Parse(const std::string& text,
                                                   const std::vector<std::string>& allowed) {
  FieldSelector sel;
  if (Trim(text).empty()) return sel;
  for (absl::string_view raw : absl::StrSplit(text, ',')) {
    std::string term = Trim(raw);
    Req r;
    size_t pos;
    if ((pos = term.find("!=")) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), true, Trim(term.substr(pos + 2))};
    } else if ((pos = term.find("==")) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), false, Trim(term.substr(pos + 2))};
    } else if ((pos = term.find('=')) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), false, Trim(term.substr(pos + 1))};
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid selector: '", text, "'; can't understand '", term, "'"));
    }
    if (r.field != "metadata.name" && r.field != "metadata.namespace" &&
        std::find(allowed.begin(), allowed.end(), r.field) == allowed.end()) {
      return absl::InvalidArgumentError("field label not supported: " + r.field);
    }
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

std::string FieldValue(const json& object, const std::string& dotted) {
  const json* cur = &object;
  for (absl::string_view part : absl::StrSplit(dotted, '.')) {
    if (!cur->is_object()) return "";
    auto it = cur->find(std::string(part));
    if (it == cur->end()) return "";
    cur = &*it;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

bool FieldSelector::Matches(const json& object) const {
  for (const Req& r : reqs_) {
    std::string v = FieldValue(object, r.field);
    // Upstream defaults a few fields before matching (spec.unschedulable false, etc.).
    if (v.empty() && (r.field == "spec.unschedulable" || r.field == "spec.hostNetwork")) {
      v = "false";
    }
    if ((v == r.value) == r.negate) return false;
  }
  return true;
}

}  // namespace neuron::fakes::apiserver
