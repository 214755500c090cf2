#include "lib/k8s/conditions.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/k8s/k8s_time.h"

namespace neuron::k8s {
namespace {

bool ValidReason(const std::string& r) {
  if (r.empty() || r.size() > 1024 || !absl::ascii_isalpha(static_cast<unsigned char>(r[0]))) {
    return false;
  }
  for (size_t i = 1; i < r.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(r[i]);
    const bool end_ok = absl::ascii_isalnum(c) || c == '_';
    if (!(end_ok || c == ',' || c == ':')) return false;
    if (i + 1 == r.size() && !end_ok) return false;
  }
  return true;
}

// DNS-1123 subdomain prefix (lower-case alphanumerics, '-' and '.'), <= 253 chars.
bool ValidPrefix(const std::string& p) {
  if (p.empty() || p.size() > 253) return false;
  for (char c : p) {
    if (!(absl::ascii_islower(static_cast<unsigned char>(c)) ||
          absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return absl::ascii_isalnum(static_cast<unsigned char>(p.front())) &&
         absl::ascii_isalnum(static_cast<unsigned char>(p.back()));
}

// Qualified name part: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63 chars.
bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 63) return false;
  for (char c : n) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return absl::ascii_isalnum(static_cast<unsigned char>(n.front())) &&
         absl::ascii_isalnum(static_cast<unsigned char>(n.back()));
}

}  // namespace

nlohmann::json Condition::ToJson() const {
  nlohmann::json j = {{"type", type},
                      {"status", status},
                      {"lastTransitionTime", FormatRfc3339(last_transition_time)},
                      {"reason", reason},
                      {"message", message}};
  if (observed_generation != 0) j["observedGeneration"] = observed_generation;
  return j;
}

absl::StatusOr<Condition> Condition::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("condition: not an object");
  Condition c;
  auto str = [&j](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  c.type = str("type");
  c.status = str("status");
  c.reason = str("reason");
  c.message = str("message");
  if (auto it = j.find("observedGeneration"); it != j.end() && it->is_number_integer()) {
    c.observed_generation = it->get<int64_t>();
  }
  if (const std::string t = str("lastTransitionTime"); !t.empty()) {
    auto parsed = ParseTime(t);
    if (!parsed.ok()) return parsed.status();
    c.last_transition_time = *parsed;
  }
  return c;
}

absl::Status ValidateCondition(const Condition& c) {
  if (c.type.empty() || c.type.size() > 316) {
    return absl::InvalidArgumentError("condition: type must be 1..316 characters");
  }
  const auto slash = c.type.find('/');
  const std::string name = slash == std::string::npos ? c.type : c.type.substr(slash + 1);
  if ((slash != std::string::npos && !ValidPrefix(c.type.substr(0, slash))) || !ValidName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("condition: invalid type \"", c.type, "\""));
  }
  if (c.status != "True" && c.status != "False" && c.status != "Unknown") {
    return absl::InvalidArgumentError("condition: status must be True, False or Unknown");
  }
  if (!ValidReason(c.reason)) {
    return absl::InvalidArgumentError(absl::StrCat("condition: invalid reason \"", c.reason, "\""));
  }
  if (c.message.size() > 32768) {
    return absl::InvalidArgumentError("condition: message longer than 32768 characters");
  }
  if (c.observed_generation < 0) {
    return absl::InvalidArgumentError("condition: observedGeneration must be >= 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SetCondition(nlohmann::json& conditions, Condition c, absl::Time now) {
  if (absl::Status s = ValidateCondition(c); !s.ok()) return s;
  if (conditions.is_null()) conditions = nlohmann::json::array();
  if (!conditions.is_array()) return absl::InvalidArgumentError("conditions: not an array");
  for (auto& existing : conditions) {
    if (!existing.is_object() || existing.value("type", "") != c.type) continue;
    auto old = Condition::FromJson(existing);
    c.last_transition_time = old.ok() && old->status == c.status ? old->last_transition_time : now;
    nlohmann::json next = c.ToJson();
    if (next == existing) return false;
    existing = std::move(next);
    return true;
  }
  c.last_transition_time = now;
  conditions.push_back(c.ToJson());
  return true;
}

std::optional<Condition> FindCondition(const nlohmann::json& conditions, const std::string& type) {
  if (!conditions.is_array()) return std::nullopt;
  for (const auto& j : conditions) {
    if (j.is_object() && j.value("type", "") == type) {
      auto c = Condition::FromJson(j);
      if (c.ok()) return *c;
    }
  }
  return std::nullopt;
}

bool IsConditionTrue(const nlohmann::json& conditions, const std::string& type) {
  auto c = FindCondition(conditions, type);
  return c && c->status == "True";
}

bool RemoveCondition(nlohmann::json& conditions, const std::string& type) {
  if (!conditions.is_array()) return false;
  for (auto it = conditions.begin(); it != conditions.end(); ++it) {
    if (it->is_object() && it->value("type", "") == type) {
      conditions.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace neuron::k8s
