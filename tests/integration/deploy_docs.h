// File: tests/integration/deploy_docs.h
// The manifests under deploy/ as yaml-cpp documents, and the flags a binary's --help documents,
// for the tests that check manifests against the code they run.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace neuron::deploytest {

inline std::string SourceDir() {
  const char* d = std::getenv("NEURON_SOURCE_DIR");
  return d != nullptr ? d : "..";
}

inline std::string BinDir() {
  const char* d = std::getenv("NEURON_BIN_DIR");
  return d != nullptr ? d : "bin";
}

struct Doc {
  std::string file;
  YAML::Node node;
  std::string kind() const { return node["kind"].as<std::string>(""); }
  std::string name() const { return node["metadata"]["name"].as<std::string>(""); }
  std::string ns() const { return node["metadata"]["namespace"].as<std::string>(""); }
};

// Every manifest file under deploy/. Not manifests: the Helm chart's templates (helm_chart_test
// renders them), kustomize overlays' patches and kustomization.yaml files (deploy_kustomize_test
// renders them), and the DRA example claim templates users copy into their own namespaces
// (tests/dra/dra_manifests_test checks them).
inline std::vector<Doc> LoadAll() {
  namespace fs = std::filesystem;
  std::vector<Doc> out;
  const fs::path deploy = fs::path(SourceDir()) / "deploy";
  for (auto it = fs::recursive_directory_iterator(deploy); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && (it->path() == deploy / "helm" || it->path() == deploy / "overlays" ||
                               it->path() == deploy / "dra" / "examples")) {
      it.disable_recursion_pending();
      continue;
    }
    const fs::directory_entry& e = *it;
    if (e.path().filename() == "kustomization.yaml") continue;
    if (e.path().extension() != ".yaml" && e.path().extension() != ".yml") continue;
    for (const YAML::Node& n : YAML::LoadAllFromFile(e.path().string())) {
      if (n.IsNull()) continue;
      out.push_back({e.path().lexically_relative(SourceDir()).string(), n});
    }
  }
  return out;
}

// What a shell command prints on stdout, and its exit status (-1 when it could not start).
struct CommandResult {
  int status = -1;
  std::string out;
};

inline CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) r.out.append(buf, n);
  r.status = ::pclose(p);
  return r;
}

// The flags a binary documents in --help ("--name=VALUE" or "--name").
inline std::set<std::string> HelpFlags(const std::string& binary) {
  std::set<std::string> flags;
  std::istringstream in(RunCommand(BinDir() + "/" + binary + " --help 2>&1").out);
  std::string word;
  while (in >> word) {
    if (word.rfind("--", 0) != 0) continue;
    flags.insert(word.substr(
        2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2));
  }
  return flags;
}

// node[k0][k1]...; an empty sequence when any step is missing (yaml-cpp throws on chaining
// lookups through a missing key).
inline YAML::Node At(YAML::Node node, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    const YAML::Node& cur = node;  // const lookups never insert
    if (!cur.IsMap() || !cur[k]) return YAML::Node(YAML::NodeType::Sequence);
    node.reset(cur[k]);  // operator= would overwrite the referenced node's content
  }
  return node;
}

}  // namespace neuron::deploytest
