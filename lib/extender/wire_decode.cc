// File: lib/extender/wire_decode.cc
// Decoding kube-scheduler's ExtenderArgs (and ExtenderFilterResult, which tests and tools read
// back) with simdjson On-Demand: names and Node items are picked out as views into the request
// body, each Node's exact text kept for the echo; the Pod is cut out as text and built only as
// far as ParsePod reads (or answered by the PodCache). Also ParseJson, the nlohmann tree for
// the small bodies (bind, preempt, priorities), read with a depth limit.
#include <deque>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_ondemand.h"
#include "lib/base/json_prune.h"
#include "lib/base/status_macros.h"
#include "lib/extender/wire.h"

namespace neuron::extender {
namespace {

namespace od = simdjson::ondemand;
using nlohmann::json;
using simdjson::error_code;

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Go matches a JSON key to a field case-insensitively (the struct has no json tags), and a
// repeated key overwrites: the last one wins.
bool KeyIs(std::string_view key, std::string_view field) {
  return absl::EqualsIgnoreCase(absl::string_view(key.data(), key.size()),
                                absl::string_view(field.data(), field.size()));
}

// One body being decoded: its errors name the message type, and views handed out point into
// the caller's body even when simdjson reads a padded copy of it.
struct Body {
  const JsonInput& in;
  std::string_view text;
  od::document& doc;
  const char* type;

  absl::Status Error(absl::string_view field, error_code e) const {
    return JsonErrorAt(absl::StrCat(type, ": ", field), e, doc, in);
  }
  absl::Status Wrong(absl::string_view what) const {
    return Invalid(absl::StrCat(type, ": ", what));
  }
  std::string_view InBody(std::string_view part) const {
    return text.substr(static_cast<size_t>(part.data() - in.data()), part.size());
  }
};

// The JSON type of `v`; a null is consumed (and checked to be `null`).
error_code TypeOf(od::value& v, od::json_type* type) {
  if (error_code e = v.type().get(*type)) return e;
  if (*type != od::json_type::null) return simdjson::SUCCESS;
  bool is_null = false;
  if (error_code e = v.is_null().get(is_null)) return e;
  return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
}

// A name as a view into the body when it has no escapes (stage 1 has checked its UTF-8 and
// control bytes, which is all such a string can get wrong), else unescaped into `unescaped`,
// whose strings never move. INCORRECT_TYPE when `v` is not a string.
error_code NameOf(const Body& b, od::value& v, std::deque<std::string>& unescaped,
                  std::string_view* out) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  if (type != od::json_type::string) return simdjson::INCORRECT_TYPE;
  const std::string_view token = JsonTokenText(v);
  if (token.size() >= 2 && token.back() == '"' && token.find('\\') == std::string_view::npos) {
    *out = b.InBody(token.substr(1, token.size() - 2));
    return simdjson::SUCCESS;
  }
  std::string_view decoded;
  if (error_code e = v.get_string().get(decoded)) return e;
  *out = unescaped.emplace_back(decoded);
  return simdjson::SUCCESS;
}

// NodeNames: an array of strings, or null (none).
absl::Status ReadNameList(const Body& b, od::value& v, std::deque<std::string>& unescaped,
                          std::optional<std::vector<std::string_view>>* out) {
  constexpr char kWrong[] = "NodeNames must be an array of strings";
  od::json_type type;
  if (error_code e = TypeOf(v, &type)) return b.Error("NodeNames", e);
  if (type == od::json_type::null) {
    out->reset();
    return absl::OkStatus();
  }
  if (type != od::json_type::array) return b.Wrong(kWrong);
  od::array names;
  if (error_code e = v.get_array().get(names)) return b.Error("NodeNames", e);
  out->emplace();
  for (auto item : names) {
    od::value name;
    error_code e = item.get(name);
    if (!e) e = NameOf(b, name, unescaped, &(*out)->emplace_back());
    if (e == simdjson::INCORRECT_TYPE) return b.Wrong(kWrong);
    if (e) return b.Error(absl::StrCat("NodeNames[", (*out)->size() - 1, "]"), e);
  }
  return absl::OkStatus();
}

// An array of strings (or null: none), copied.
absl::Status ReadStringList(const Body& b, od::value& v,
                            std::optional<std::vector<std::string>>* out) {
  std::optional<std::vector<std::string_view>> views;
  std::deque<std::string> unescaped;
  NEURON_RETURN_IF_ERROR(ReadNameList(b, v, unescaped, &views));
  if (views) {
    out->emplace(views->begin(), views->end());
  } else {
    out->reset();
  }
  return absl::OkStatus();
}

// An object of string values (or null: empty).
absl::Status ReadStringMap(const Body& b, od::value& v, const char* what,
                           std::map<std::string, std::string>* out) {
  out->clear();
  od::json_type type;
  if (error_code e = TypeOf(v, &type)) return b.Error(what, e);
  if (type == od::json_type::null) return absl::OkStatus();
  if (type != od::json_type::object) return b.Wrong(absl::StrCat(what, " must be an object"));
  od::object members;
  if (error_code e = v.get_object().get(members)) return b.Error(what, e);
  for (auto field : members) {
    std::string_view key;
    std::string_view value;
    if (error_code e = field.unescaped_key().get(key)) return b.Error(what, e);
    std::string& slot = (*out)[std::string(key)];
    error_code e = field.value().get_string().get(value);
    if (e == simdjson::INCORRECT_TYPE) {
      return b.Wrong(absl::StrCat(what, " values must be strings"));
    }
    if (e) return b.Error(absl::StrCat(what, ".", absl::string_view(key.data(), key.size())), e);
    slot.assign(value);
  }
  return absl::OkStatus();
}

// metadata.name of a Node (null or absent: empty).
absl::Status ReadNodeName(const Body& b, od::value& metadata, std::string* name) {
  od::json_type type;
  if (error_code e = TypeOf(metadata, &type)) return b.Error("Nodes.items[].metadata", e);
  if (type == od::json_type::null) return absl::OkStatus();
  od::object fields;
  if (error_code e = metadata.get_object().get(fields)) return b.Error("Nodes.items[].metadata", e);
  for (auto field : fields) {
    std::string_view key;
    od::value v;
    error_code e = field.unescaped_key().get(key);
    if (!e && KeyIs(key, "name")) e = field.value().get(v);
    if (!e && KeyIs(key, "name")) e = TypeOf(v, &type);
    if (!e && KeyIs(key, "name") && type != od::json_type::null) {
      std::string_view text;
      e = v.get_string().get(text);
      name->assign(text);
    }
    if (e) return b.Error("Nodes.items[].metadata.name", e);
  }
  return absl::OkStatus();
}

// One Node item: metadata.name picked out, the exact text kept as a view into the body.
absl::Status ReadNodeItem(const Body& b, od::value& v, RawNode* out) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return b.Error("Nodes.items[]", e);
  if (type != od::json_type::object) return b.Wrong("Nodes.items[] must be Node objects");
  const char* begin = JsonTokenText(v).data();
  od::object fields;
  if (error_code e = v.get_object().get(fields)) return b.Error("Nodes.items[]", e);
  for (auto field : fields) {
    std::string_view key;
    od::value metadata;
    error_code e = field.unescaped_key().get(key);
    if (!e && KeyIs(key, "metadata")) e = field.value().get(metadata);
    if (e) return b.Error("Nodes.items[]", e);
    if (KeyIs(key, "metadata")) NEURON_RETURN_IF_ERROR(ReadNodeName(b, metadata, &out->name));
  }
  if (out->name.empty()) return b.Wrong("Nodes.items[] needs metadata.name");
  // The object is consumed: the document now points at the token after its closing brace.
  const char* next = nullptr;
  if (error_code e = b.doc.current_location().get(next)) return b.Error("Nodes.items[]", e);
  std::string_view text(begin, static_cast<size_t>(next - begin));
  while (!text.empty() && text.back() != '}') text.remove_suffix(1);  // the space before `next`
  out->json = b.InBody(text);
  return absl::OkStatus();
}

// A v1.NodeList: only its items matter (or null: no list).
absl::Status ReadNodeList(const Body& b, od::value& v, std::optional<std::vector<RawNode>>* out) {
  od::json_type type;
  if (error_code e = TypeOf(v, &type)) return b.Error("Nodes", e);
  if (type == od::json_type::null) {
    out->reset();
    return absl::OkStatus();
  }
  if (type != od::json_type::object) return b.Wrong("Nodes must be a NodeList object");
  od::object list;
  if (error_code e = v.get_object().get(list)) return b.Error("Nodes", e);
  out->emplace();
  for (auto field : list) {
    std::string_view key;
    od::value items;
    error_code e = field.unescaped_key().get(key);
    if (!e && KeyIs(key, "items")) e = field.value().get(items);
    if (!e && KeyIs(key, "items")) e = TypeOf(items, &type);
    if (e) return b.Error("Nodes", e);
    if (!KeyIs(key, "items") || type == od::json_type::null) continue;
    if (type != od::json_type::array) return b.Wrong("Nodes.items must be an array");
    od::array array;
    if (error_code e2 = items.get_array().get(array)) return b.Error("Nodes.items", e2);
    (*out)->clear();
    for (auto element : array) {
      od::value item;
      if (error_code e2 = element.get(item)) return b.Error("Nodes.items[]", e2);
      NEURON_RETURN_IF_ERROR(ReadNodeItem(b, item, &(*out)->emplace_back()));
    }
  }
  return absl::OkStatus();
}

// The top-level object of `text`, each member handed to `read`; then nothing but whitespace.
// The document and its parser end here, so that what `read` kept are views into `text` only.
absl::Status ForEachTopMember(
    std::string_view text, const JsonInput& in, const char* type,
    const std::function<absl::Status(const Body&, std::string_view, od::value&)>& read) {
  JsonParser parser;
  od::document doc;
  const Body b{in, text, doc, type};
  error_code e = parser.Iterate(in).get(doc);
  od::json_type top = od::json_type::null;
  if (!e) e = doc.type().get(top);
  if (!e && top != od::json_type::object) return b.Wrong("must be a JSON object");
  od::object members;
  if (!e) e = doc.get_object().get(members);
  if (e) return JsonError(absl::StrCat(type, ": not valid JSON"), e);
  for (auto field : members) {
    std::string_view key;
    od::value v;
    if ((e = field.unescaped_key().get(key)) || (e = field.value().get(v))) break;
    NEURON_RETURN_IF_ERROR(read(b, key, v));
  }
  if (!e) e = ExpectEnd(doc);
  if (e) return JsonErrorAt(absl::StrCat(type, ": not valid JSON"), e, doc, in);
  return absl::OkStatus();
}

absl::StatusOr<PodInfo> DecodePodText(std::optional<std::string_view> raw, PodCache* cache) {
  if (!raw) return Invalid("Pod is missing");
  if (cache) {
    if (std::optional<PodInfo> known = cache->Find(*raw)) return std::move(*known);
  }
  absl::StatusOr<json> pod = ParsePruned(*raw, PodFields(), kMaxJsonDepth);
  if (!pod.ok()) return Invalid(absl::StrCat("Pod: ", pod.status().message()));
  absl::StatusOr<PodInfo> p = ParsePod(*pod);
  if (!p.ok()) return Invalid(absl::StrCat("Pod: ", p.status().message()));
  if (cache) cache->Add(*raw, *p);
  return p;
}

absl::StatusOr<ExtenderArgs> DecodeArgs(std::string_view body, const JsonInput& in,
                                        PodCache* pods) {
  ExtenderArgs args;
  std::optional<std::string_view> pod;
  NEURON_RETURN_IF_ERROR(ForEachTopMember(
      body, in, "ExtenderArgs", [&](const Body& b, std::string_view key, od::value& v) {
        if (KeyIs(key, "Pod")) {
          od::json_type type;
          std::string_view raw;
          error_code e = TypeOf(v, &type);
          if (!e && type == od::json_type::null) {
            pod.reset();
            return absl::OkStatus();
          }
          if (!e) e = RawJson(v, &raw);  // built below, after the cache is asked
          if (e) return b.Error("Pod", e);
          pod = b.InBody(raw);
          return absl::OkStatus();
        }
        if (KeyIs(key, "NodeNames"))
          return ReadNameList(b, v, args.unescaped_names, &args.node_names);
        if (KeyIs(key, "Nodes")) return ReadNodeList(b, v, &args.nodes);
        return absl::OkStatus();
      }));
  absl::StatusOr<PodInfo> p = DecodePodText(pod, pods);
  if (!p.ok()) return p.status();
  args.pod = std::move(*p);
  if (!args.node_names && !args.nodes) return Invalid("neither NodeNames nor Nodes is set");
  return args;
}

}  // namespace

absl::StatusOr<json> ParseJson(std::string_view body) {
  const JsonInput in(body);
  JsonParser parser;
  od::document doc;
  json j;
  error_code e = parser.Iterate(in).get(doc);
  if (!e) e = ReadJsonTree(doc, kMaxJsonDepth, &j);
  if (!e) e = ExpectEnd(doc);
  if (e == simdjson::DEPTH_ERROR) {
    return Invalid(absl::StrCat("JSON nested deeper than ", kMaxJsonDepth, " levels"));
  }
  if (e) return JsonErrorAt("request body is not valid JSON", e, doc, in);
  return j;
}

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body, PodCache* pods) {
  const JsonInput in(body);
  return DecodeArgs(body, in, pods);
}

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(const std::string& body, PodCache* pods) {
  const JsonInput in(body);  // no copy when the body has room for simdjson's padding
  return DecodeArgs(body, in, pods);
}

absl::StatusOr<FilterResult> DecodeFilterResult(std::string_view body) {
  const JsonInput in(body);
  FilterResult r;
  std::optional<std::vector<RawNode>> nodes;
  NEURON_RETURN_IF_ERROR(ForEachTopMember(
      body, in, "ExtenderFilterResult", [&](const Body& b, std::string_view key, od::value& v) {
        if (KeyIs(key, "NodeNames")) return ReadStringList(b, v, &r.node_names);
        if (KeyIs(key, "Nodes")) return ReadNodeList(b, v, &nodes);
        if (KeyIs(key, "FailedNodes")) return ReadStringMap(b, v, "FailedNodes", &r.failed);
        if (KeyIs(key, "FailedAndUnresolvableNodes")) {
          return ReadStringMap(b, v, "FailedAndUnresolvableNodes", &r.failed_unresolvable);
        }
        if (!KeyIs(key, "Error")) return absl::OkStatus();
        od::json_type type;
        std::string_view text;
        error_code e = TypeOf(v, &type);
        if (!e && type == od::json_type::null) return absl::OkStatus();
        if (!e) e = v.get_string().get(text);
        if (e == simdjson::INCORRECT_TYPE) return b.Wrong("Error must be a string");
        if (e) return b.Error("Error", e);
        r.error.assign(text);
        return absl::OkStatus();
      }));
  if (nodes) {
    r.nodes.emplace();
    for (const RawNode& n : *nodes) r.nodes->push_back(n.json);
  }
  return r;
}

}  // namespace neuron::extender
