// Sample for check_const_json_index.py: nothing here may be flagged. Not compiled into anything.
#include <string>

#include "nlohmann/json.hpp"

using nlohmann::json;

int main() {
  json doc = json::parse(R"({"a": [1, 2], "m": {"k": "v"}})");
  doc["inserted"] = 1;  // non-const: inserts, defined
  const json& view = doc;
  const json* a = view.contains("a") ? &view.at("a") : nullptr;  // at() throws, never UB
  const int first = a != nullptr && a->is_array() && !a->empty() ? (*a)[0].get<int>() : 0;
  auto it = view.find("m");
  const std::string k = it != view.end() ? it->value("k", "") : "";
  const json& p = view["/m/k"_json_pointer];  // JSON pointer: throws when missing
  return first + static_cast<int>(k.size() + p.size());
}
