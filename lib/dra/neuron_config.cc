// File: lib/dra/neuron_config.cc
#include "lib/dra/neuron_config.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/base/json_ondemand.h"
#include "lib/base/status_macros.h"

namespace neuron::dra {
namespace {

namespace od = simdjson::ondemand;

constexpr size_t kMaxQuoted = 40;  // of a bad value, in an error message

constexpr char kLncField[] = "logicalNeuronCore";
constexpr char kModeField[] = "ultraserverMode";
constexpr char kCacheField[] = "compileCache";
constexpr size_t kMaxObjectName = 253;  // a DNS-1123 subdomain, as Kubernetes object names are
constexpr size_t kMaxMountPath = 4096;  // PATH_MAX

// The members as written; values checked once the kind is known.
struct Fields {
  std::string api;
  std::string kind;
  std::optional<std::string> lnc;    // raw JSON
  std::optional<std::string> mode;   // raw JSON
  std::optional<std::string> cache;  // raw JSON
};

absl::Status Invalid(absl::string_view prefix, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, ": ", what));
}

std::string Shown(absl::string_view raw) {
  return raw.size() <= kMaxQuoted ? std::string(raw)
                                  : absl::StrCat(raw.substr(0, kMaxQuoted), "...");
}

// A plain decimal in `allowed` ("+1", "1.0", "\"1\"" are not).
std::optional<int> AllowedInt(absl::string_view raw, std::initializer_list<int> allowed) {
  int v = 0;
  if (raw.empty() || raw.front() == '+' || !absl::SimpleAtoi(raw, &v)) {
    return std::nullopt;
  }
  for (int a : allowed) {
    if (v == a) {
      return v;
    }
  }
  return std::nullopt;
}

absl::Status NotJson(absl::string_view prefix, simdjson::error_code e,
                     absl::string_view what = "") {
  return Invalid(prefix, absl::StrCat(what, "not valid JSON: ", simdjson::error_message(e)));
}

absl::Status ReadRaw(od::value v, absl::string_view key, std::optional<std::string>* out,
                     absl::string_view prefix) {
  std::string_view raw;
  if (simdjson::error_code e = RawJson(v, &raw)) {
    return Invalid(prefix,
                   absl::StrCat(key, " is not a valid JSON value: ", simdjson::error_message(e)));
  }
  *out = std::string(raw);
  return absl::OkStatus();
}

absl::Status ReadField(od::value v, const std::string& key, Fields& f, absl::string_view prefix) {
  if (key == kLncField) {
    return ReadRaw(v, key, &f.lnc, prefix);
  }
  if (key == kModeField) {
    return ReadRaw(v, key, &f.mode, prefix);
  }
  if (key == kCacheField) {
    return ReadRaw(v, key, &f.cache, prefix);
  }
  std::string* out = key == "apiVersion" ? &f.api : key == "kind" ? &f.kind : nullptr;
  if (out == nullptr) {
    return Invalid(prefix, absl::StrCat("unknown field \"", Shown(key), "\""));
  }
  std::string_view value;
  if (v.get_string().get(value) != simdjson::SUCCESS) {
    return Invalid(prefix, absl::StrCat(key, " must be a string"));
  }
  out->assign(value);
  return absl::OkStatus();
}

// The members of the one object in `text`, each handed to `read` (with its key) exactly once:
// a key seen twice is an error. `not_object` is the error for any other JSON value; `what`
// begins the others' messages. Nothing nested is read here, so no depth limit is needed: what
// is kept raw is passed over without recursion.
absl::Status ForEachMember(
    std::string_view text, absl::string_view prefix, absl::string_view what,
    absl::string_view not_object,
    const std::function<absl::Status(const std::string& key, od::value v)>& read) {
  JsonInput in(text);
  JsonParser parser;
  od::document doc;
  if (simdjson::error_code e = parser.Iterate(in).get(doc)) return NotJson(prefix, e, what);
  od::object object;
  if (simdjson::error_code e = doc.get_object().get(object)) {
    return e == simdjson::INCORRECT_TYPE ? Invalid(prefix, not_object) : NotJson(prefix, e, what);
  }
  std::set<std::string> seen;
  for (auto field : object) {
    std::string_view key_view;
    od::value v;
    if (simdjson::error_code e = field.unescaped_key().get(key_view)) {
      return NotJson(prefix, e, what);
    }
    if (simdjson::error_code e = field.value().get(v)) return NotJson(prefix, e, what);
    const std::string key(key_view);  // the view dies with the next member
    if (!seen.insert(key).second) {
      return Invalid(prefix, absl::StrCat(what, "duplicate field \"", Shown(key), "\""));
    }
    NEURON_RETURN_IF_ERROR(read(key, v));
  }
  if (simdjson::error_code e = ExpectEnd(doc)) return NotJson(prefix, e, what);
  return absl::OkStatus();
}

absl::StatusOr<Fields> Scan(std::string_view json_bytes, absl::string_view prefix) {
  Fields f;
  NEURON_RETURN_IF_ERROR(ForEachMember(
      json_bytes, prefix, "", "parameters must be a JSON object",
      [&](const std::string& key, od::value v) { return ReadField(v, key, f, prefix); }));
  return f;
}

absl::Status CheckApiVersion(const Fields& f, absl::string_view prefix) {
  if (f.api == kConfigApiVersion) {
    return absl::OkStatus();
  }
  if (f.api.empty()) {
    return Invalid(prefix,
                   absl::StrCat("apiVersion is missing (want \"", kConfigApiVersion, "\")"));
  }
  return Invalid(prefix, absl::StrCat("apiVersion must be \"", kConfigApiVersion, "\", got \"",
                                      Shown(f.api), "\""));
}

// A Kubernetes object name (DNS-1123 subdomain): what a NeuronCache can be called.
bool IsObjectName(absl::string_view name) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > kMaxObjectName || !alnum(name.front()) || !alnum(name.back())) {
    return false;
  }
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

// Absolute, printable ASCII (it goes into the CDI spec verbatim), no ".." and not "/" itself.
absl::Status CheckMountPath(absl::string_view path, absl::string_view prefix) {
  const auto bad = [&](absl::string_view why) {
    return Invalid(prefix, absl::StrCat("compileCache mountPath \"", Shown(path), "\" ", why));
  };
  if (path.empty() || path.front() != '/') return bad("must be an absolute path");
  if (path.size() > kMaxMountPath) return bad("is too long");
  for (char c : path) {
    if (c < 0x20 || c > 0x7e) return bad("must be printable ASCII");
  }
  if (path.find_first_not_of('/') == absl::string_view::npos) {
    return bad("would hide the container's root");
  }
  for (absl::string_view rest = path; !rest.empty();) {
    const size_t slash = rest.find('/');
    if (rest.substr(0, slash) == "..") return bad("must not contain \"..\"");
    rest = slash == absl::string_view::npos ? "" : rest.substr(slash + 1);
  }
  return absl::OkStatus();
}

// The members of compileCache, each a string, none twice, no others.
absl::StatusOr<std::map<std::string, std::string>> ScanCacheObject(absl::string_view raw,
                                                                   absl::string_view prefix) {
  std::map<std::string, std::string> members;
  absl::Status s = ForEachMember(
      std::string_view(raw.data(), raw.size()), prefix, "compileCache: ",
      "compileCache must be an object: {\"name\": \"<NeuronCache>\"} or "
      "{\"clusterCache\": \"<ClusterNeuronCache>\"}",
      [&](const std::string& key, od::value v) {
        if (key != "name" && key != "clusterCache" && key != "mountPath") {
          return Invalid(prefix, absl::StrCat("compileCache: unknown field \"", Shown(key),
                                              "\" (name, clusterCache, mountPath)"));
        }
        std::string_view value;
        if (v.get_string().get(value) != simdjson::SUCCESS) {
          return Invalid(prefix, absl::StrCat("compileCache ", key, " must be a string"));
        }
        members.emplace(key, std::string(value));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return members;
}

absl::StatusOr<CompileCacheConfig> AsCompileCache(absl::string_view raw, absl::string_view prefix) {
  absl::StatusOr<std::map<std::string, std::string>> m = ScanCacheObject(raw, prefix);
  if (!m.ok()) return m.status();
  const bool named = m->count("name") > 0, cluster = m->count("clusterCache") > 0;
  if (named == cluster) {
    return Invalid(prefix, absl::StrCat("compileCache needs ", named ? "only one of" : "one of",
                                        " name (a NeuronCache in the claim's namespace) or "
                                        "clusterCache (a ClusterNeuronCache)"));
  }
  CompileCacheConfig c;
  c.kind = named ? kNeuronCacheKind : kClusterNeuronCacheKind;
  c.name = named ? m->at("name") : m->at("clusterCache");
  if (!IsObjectName(c.name)) {
    return Invalid(
        prefix, absl::StrCat("compileCache ", named ? "name" : "clusterCache", " \"", Shown(c.name),
                             "\" is not a valid object name (lowercase letters, digits, "
                             "'-' and '.', starting and ending with a letter or digit)"));
  }
  auto path = m->find("mountPath");
  c.mount_path = path == m->end() ? kDefaultCacheMountPath : path->second;
  if (absl::Status s = CheckMountPath(c.mount_path, prefix); !s.ok()) return s;
  return c;
}

absl::StatusOr<NeuronConfig> AsNeuronConfig(const Fields& f) {
  const absl::string_view prefix = kNeuronConfigKind;
  if (f.mode) {
    return Invalid(prefix, absl::StrCat("unknown field \"", kModeField,
                                        "\" (a field of UltraServerConfig, a config entry of "
                                        "its own)"));
  }
  NeuronConfig c;
  if (f.lnc) {
    c.logical_neuron_core = AllowedInt(*f.lnc, {1, 2});
    if (!c.logical_neuron_core) {
      return Invalid(prefix, absl::StrCat("logicalNeuronCore must be 1 or 2, got ", Shown(*f.lnc)));
    }
  }
  if (f.cache) {
    absl::StatusOr<CompileCacheConfig> cache = AsCompileCache(*f.cache, prefix);
    if (!cache.ok()) return cache.status();
    c.compile_cache = *std::move(cache);
  }
  return c;
}

absl::StatusOr<UltraServerConfig> AsUltraServerConfig(const Fields& f) {
  const absl::string_view prefix = kUltraServerConfigKind;
  if (f.lnc || f.cache) {
    return Invalid(prefix, absl::StrCat("unknown field \"", f.lnc ? kLncField : kCacheField,
                                        "\" (a field of NeuronConfig, a config entry of its own)"));
  }
  if (!f.mode) {
    return Invalid(prefix, "ultraserverMode is missing (the nodes in the set: 1, 2 or 4)");
  }
  const std::optional<int> mode = AllowedInt(*f.mode, {1, 2, 4});
  if (!mode) {
    return Invalid(prefix, absl::StrCat("ultraserverMode (the nodes in the set) must be 1, 2 or 4, "
                                        "got ",
                                        Shown(*f.mode)));
  }
  return UltraServerConfig{*mode};
}

}  // namespace

absl::StatusOr<OpaqueConfig> ParseOpaqueConfig(std::string_view json_bytes) {
  constexpr absl::string_view kPrefix = "neuron.aws.com config";
  absl::StatusOr<Fields> f = Scan(json_bytes, kPrefix);
  if (!f.ok()) {
    return f.status();
  }
  const absl::string_view prefix = f->kind.empty() ? kPrefix : absl::string_view(f->kind);
  if (absl::Status s = CheckApiVersion(*f, prefix); !s.ok()) {
    return s;
  }
  OpaqueConfig out;
  if (f->kind == kNeuronConfigKind) {
    absl::StatusOr<NeuronConfig> c = AsNeuronConfig(*f);
    if (!c.ok()) {
      return c.status();
    }
    out.neuron = *c;
    return out;
  }
  if (f->kind == kUltraServerConfigKind) {
    absl::StatusOr<UltraServerConfig> c = AsUltraServerConfig(*f);
    if (!c.ok()) {
      return c.status();
    }
    out.ultraserver = *c;
    return out;
  }
  return Invalid(kPrefix,
                 f->kind.empty()
                     ? "kind is missing (want \"NeuronConfig\" or \"UltraServerConfig\")"
                     : absl::StrCat("kind must be \"NeuronConfig\" or \"UltraServerConfig\", "
                                    "got \"",
                                    Shown(f->kind), "\""));
}

absl::StatusOr<NeuronConfig> ParseNeuronConfig(std::string_view json_bytes) {
  const absl::string_view prefix = kNeuronConfigKind;
  absl::StatusOr<Fields> f = Scan(json_bytes, prefix);
  if (!f.ok()) {
    return f.status();
  }
  if (absl::Status s = CheckApiVersion(*f, prefix); !s.ok()) {
    return s;
  }
  if (f->kind != kNeuronConfigKind) {
    return Invalid(prefix, f->kind.empty() ? "kind is missing (want \"NeuronConfig\")"
                                           : absl::StrCat("kind must be \"NeuronConfig\", got \"",
                                                          Shown(f->kind), "\""));
  }
  return AsNeuronConfig(*f);
}

}  // namespace neuron::dra
