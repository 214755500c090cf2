#include "lib/k8s/kubeconfig.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/exec_credential.h"
#include "yaml-cpp/yaml.h"

namespace neuron::k8s {
namespace {

absl::Status Bad(const std::string& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", field, ": ", what));
}

// Reads a scalar string field; missing -> "" (or error if required).
absl::StatusOr<std::string> Str(const YAML::Node& parent, const char* key, const std::string& where,
                                bool required = false) {
  const YAML::Node n = parent[key];
  if (!n || n.IsNull()) {
    if (required) return Bad(absl::StrCat(where, ".", key), "missing");
    return std::string();
  }
  if (!n.IsScalar()) return Bad(absl::StrCat(where, ".", key), "not a string");
  return n.as<std::string>();
}

absl::StatusOr<bool> Bool(const YAML::Node& parent, const char* key, const std::string& where) {
  const YAML::Node n = parent[key];
  if (!n || n.IsNull()) return false;
  bool b = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b)) {
    return Bad(absl::StrCat(where, ".", key), "not a boolean");
  }
  return b;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return Bad(field, absl::StrCat("cannot read file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Resolve(const std::string& base, const std::string& p) {
  if (p.empty() || base.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (std::filesystem::path(base) / p).string();
}

// Finds the entry named `name` in the list `key` ("clusters"...); `inner` is the nested map key.
absl::StatusOr<std::pair<YAML::Node, std::string>> FindNamed(const YAML::Node& root,
                                                             const char* key, const char* inner,
                                                             const std::string& name) {
  const YAML::Node list = root[key];
  if (list && !list.IsNull() && !list.IsSequence()) return Bad(key, "not a list");
  if (list) {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = absl::StrCat(key, "[", i, "]");
      if (!list[i].IsMap()) return Bad(where, "not a map");
      NEURON_ASSIGN_OR_RETURN(std::string n, Str(list[i], "name", where, true));
      if (n != name) continue;
      const YAML::Node body = list[i][inner];
      if (!body || !body.IsMap()) {
        return Bad(absl::StrCat(where, ".", inner), "missing or not a map");
      }
      return std::make_pair(body, absl::StrCat(where, ".", inner));
    }
  }
  return Bad(key, absl::StrCat("no entry named \"", name, "\""));
}

// `*-data` (base64) or file path variant.
absl::StatusOr<std::string> DataOrFile(const YAML::Node& m, const char* data_key,
                                       const char* file_key, const std::string& where,
                                       const std::string& base) {
  NEURON_ASSIGN_OR_RETURN(std::string data, Str(m, data_key, where));
  if (!data.empty()) {
    auto decoded = DecodeBase64(data);
    if (!decoded.ok()) return Bad(absl::StrCat(where, ".", data_key), "invalid base64");
    return *decoded;
  }
  NEURON_ASSIGN_OR_RETURN(std::string file, Str(m, file_key, where));
  if (file.empty()) return std::string();
  return ReadFile(Resolve(base, file), absl::StrCat(where, ".", file_key));
}

absl::StatusOr<ExecConfig> ParseExec(const YAML::Node& e, const std::string& where) {
  if (!e.IsMap()) return Bad(where, "not a map");
  ExecConfig x;
  NEURON_ASSIGN_OR_RETURN(x.command, Str(e, "command", where, true));
  NEURON_ASSIGN_OR_RETURN(x.api_version, Str(e, "apiVersion", where));
  if (x.api_version.empty()) x.api_version = "client.authentication.k8s.io/v1beta1";
  if (x.api_version != "client.authentication.k8s.io/v1" &&
      x.api_version != "client.authentication.k8s.io/v1beta1") {
    return Bad(where + ".apiVersion", absl::StrCat("unsupported \"", x.api_version, "\""));
  }
  NEURON_ASSIGN_OR_RETURN(x.interactive_mode, Str(e, "interactiveMode", where));
  NEURON_ASSIGN_OR_RETURN(x.provide_cluster_info, Bool(e, "provideClusterInfo", where));
  if (const YAML::Node args = e["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) return Bad(where + ".args", "not a list");
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) return Bad(absl::StrCat(where, ".args[", i, "]"), "not a string");
      x.args.push_back(args[i].as<std::string>());
    }
  }
  if (const YAML::Node env = e["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) return Bad(where + ".env", "not a list");
    for (size_t i = 0; i < env.size(); ++i) {
      const std::string w = absl::StrCat(where, ".env[", i, "]");
      if (!env[i].IsMap()) return Bad(w, "not a map");
      NEURON_ASSIGN_OR_RETURN(std::string name, Str(env[i], "name", w, true));
      NEURON_ASSIGN_OR_RETURN(std::string value, Str(env[i], "value", w));
      x.env.emplace_back(std::move(name), std::move(value));
    }
  }
  return x;
}

absl::StatusOr<ClientConfig> Build(const YAML::Node& root, const KubeconfigOptions& opts) {
  if (!root.IsMap()) return Bad("(root)", "not a map");
  Clock& clock = opts.clock ? *opts.clock : Clock::Real();
  std::string ctx_name = opts.context;
  if (ctx_name.empty()) {
    NEURON_ASSIGN_OR_RETURN(ctx_name, Str(root, "current-context", "(root)"));
    if (ctx_name.empty()) return Bad("current-context", "not set and no context given");
  }
  NEURON_ASSIGN_OR_RETURN(auto ctx, FindNamed(root, "contexts", "context", ctx_name));
  NEURON_ASSIGN_OR_RETURN(std::string cluster_name, Str(ctx.first, "cluster", ctx.second, true));
  NEURON_ASSIGN_OR_RETURN(std::string user_name, Str(ctx.first, "user", ctx.second));
  ClientConfig cfg;
  NEURON_ASSIGN_OR_RETURN(std::string ns, Str(ctx.first, "namespace", ctx.second));
  if (!ns.empty()) cfg.default_namespace = ns;

  NEURON_ASSIGN_OR_RETURN(auto cl, FindNamed(root, "clusters", "cluster", cluster_name));
  const YAML::Node& c = cl.first;
  NEURON_ASSIGN_OR_RETURN(cfg.server, Str(c, "server", cl.second, true));
  if (cfg.server.rfind("https://", 0) != 0 && cfg.server.rfind("http://", 0) != 0) {
    return Bad(cl.second + ".server", "must start with https:// or http://");
  }
  NEURON_ASSIGN_OR_RETURN(
      cfg.ca_pem, DataOrFile(c, "certificate-authority-data", "certificate-authority", cl.second,
                             opts.base_dir));
  NEURON_ASSIGN_OR_RETURN(cfg.insecure_skip_tls_verify,
                          Bool(c, "insecure-skip-tls-verify", cl.second));
  NEURON_ASSIGN_OR_RETURN(cfg.tls_server_name, Str(c, "tls-server-name", cl.second));

  if (user_name.empty()) return cfg;  // anonymous
  NEURON_ASSIGN_OR_RETURN(auto us, FindNamed(root, "users", "user", user_name));
  const YAML::Node& u = us.first;
  Credentials creds;
  NEURON_ASSIGN_OR_RETURN(
      creds.client_cert_pem,
      DataOrFile(u, "client-certificate-data", "client-certificate", us.second, opts.base_dir));
  NEURON_ASSIGN_OR_RETURN(creds.client_key_pem,
                          DataOrFile(u, "client-key-data", "client-key", us.second, opts.base_dir));
  if (creds.client_cert_pem.empty() != creds.client_key_pem.empty()) {
    return Bad(us.second, "client certificate and key must be given together");
  }
  NEURON_ASSIGN_OR_RETURN(creds.token, Str(u, "token", us.second));
  NEURON_ASSIGN_OR_RETURN(std::string token_file, Str(u, "tokenFile", us.second));
  if (u["auth-provider"] && !u["auth-provider"].IsNull()) {
    return Bad(us.second + ".auth-provider", "auth-provider plugins are not supported; use exec");
  }
  if (const YAML::Node e = u["exec"]; e && !e.IsNull()) {
    NEURON_ASSIGN_OR_RETURN(ExecConfig x, ParseExec(e, us.second + ".exec"));
    x.cluster_server = cfg.server;
    x.cluster_ca_pem = cfg.ca_pem;
    x.cluster_insecure = cfg.insecure_skip_tls_verify;
    cfg.credentials = std::make_shared<ExecCredentialProvider>(std::move(x), clock);
  } else if (creds.token.empty() && !token_file.empty()) {
    cfg.credentials =
        std::make_shared<TokenFileCredentials>(Resolve(opts.base_dir, token_file), clock);
  } else {
    cfg.credentials = StaticCredentials(std::move(creds));
  }
  return cfg;
}

}  // namespace

absl::StatusOr<std::string> DecodeBase64(const std::string& in) {
  // absl::Base64Unescape skips whitespace and accepts missing padding, as our parser always did.
  std::string out;
  if (!absl::Base64Unescape(in, &out)) return absl::InvalidArgumentError("invalid base64");
  return out;
}

absl::StatusOr<ClientConfig> ParseKubeconfig(const std::string& yaml,
                                             const KubeconfigOptions& opts) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
    return Build(root, opts);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig: malformed YAML: ", e.what()));
  } catch (const std::exception& e) {  // yaml-cpp conversions may throw other types
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", e.what()));
  }
}

absl::StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, KubeconfigOptions opts) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return absl::NotFoundError(absl::StrCat("kubeconfig: cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (opts.base_dir.empty()) opts.base_dir = std::filesystem::path(path).parent_path().string();
  return ParseKubeconfig(ss.str(), opts);
}

}  // namespace neuron::k8s
