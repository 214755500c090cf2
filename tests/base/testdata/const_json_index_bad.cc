// Sample for check_const_json_index.py: every marked line must be found (the test counts them).
// Not compiled into anything.
#include <string>

#include "nlohmann/json.hpp"

using nlohmann::json;

struct Holder {
  json object;
  const json& Get() const { return object; }
};

std::string Name(const json& obj) {
  return obj["metadata"].value("name", "");  // BAD
}

int Count(const nlohmann::json& obj, const std::string& key) {
  return obj[key].get<int>();  // BAD
}

bool Flag(const Holder& h) {
  const auto& j = h.Get();
  const char* key = "paused";
  return j[key].is_boolean() && h.object["x"].is_null();  // BAD (two)
}

template <typename J>
bool Has(const J& j) {
  return !j["spec"].is_null();  // BAD (instantiated below with a const json)
}

int main() {
  const json doc = json::parse("{}");
  return Has(doc) + static_cast<int>(doc["items"].size()) + Count(doc, "n") +  // BAD
         Flag(Holder{}) + static_cast<int>(Name(doc).size());
}
