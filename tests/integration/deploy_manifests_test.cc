// File: tests/integration/deploy_manifests_test.cc
// Every manifest under deploy/ parses (yaml-cpp) and agrees with what it relies on: objects it
// references exist (namespace, service account, RBAC), DaemonSets select Neuron nodes without a
// label our own agent publishes, tolerate the Neuron taint, run our image with flags the binary
// really has (its --help), mount what those flags point at, and the device plugin's RBAC is
// exactly what its pod handshake calls.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "lib/agent/node_labels.h"
#include "lib/topology/shapes.h"
#include "tests/integration/deploy_docs.h"

namespace neuron {
namespace {

namespace fs = std::filesystem;
using deploytest::At;
using deploytest::BinDir;
using deploytest::Doc;
using deploytest::HelpFlags;
using deploytest::LoadAll;
using deploytest::SourceDir;

// Each binary has its own image, named after it (scripts/build-images.sh, images/Dockerfile).
constexpr char kImageTag[] = ":dev";
constexpr char kPciLabel[] = "feature.node.kubernetes.io/pci-1d0f.present";
constexpr char kEmulatedLabel[] = "aws.amazon.com/neuron-emulated";

YAML::Node Terms(const YAML::Node& spec) {
  return At(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                   "nodeSelectorTerms"});
}

// "--name=value" args of a container.
std::map<std::string, std::string> Args(const YAML::Node& c) {
  std::map<std::string, std::string> out;
  for (const YAML::Node& a : c["args"]) {
    const std::string s = a.as<std::string>();
    const size_t eq = s.find('=');
    out[s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
        eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  return out;
}

// Every node label key a pod spec selects on (nodeSelector and required node affinity).
std::set<std::string> SelectedKeys(const YAML::Node& spec) {
  std::set<std::string> keys;
  for (const auto& kv : spec["nodeSelector"]) keys.insert(kv.first.as<std::string>());
  for (const YAML::Node& t : Terms(spec)) {
    for (const YAML::Node& e : t["matchExpressions"]) keys.insert(e["key"].as<std::string>());
  }
  return keys;
}

// mountPath -> the volume behind it ("hostPath:<path>", "emptyDir", ...).
std::map<std::string, std::string> Mounts(const YAML::Node& spec, const YAML::Node& c) {
  std::map<std::string, std::string> volumes;
  for (const YAML::Node& v : spec["volumes"]) {
    const std::string name = v["name"].as<std::string>();
    volumes[name] = v["hostPath"] ? "hostPath:" + v["hostPath"]["path"].as<std::string>()
                                  : (v["emptyDir"] ? "emptyDir" : "other");
  }
  std::map<std::string, std::string> out;
  for (const YAML::Node& m : c["volumeMounts"]) {
    const std::string name = m["name"].as<std::string>();
    out[m["mountPath"].as<std::string>()] = volumes.count(name) ? volumes[name] : "MISSING";
  }
  return out;
}

TEST_CASE("Every manifest under deploy/ parses and names its objects", "[deploy]") {
  const std::vector<Doc> docs = LoadAll();
  REQUIRE(docs.size() >= 10);
  std::set<std::string> namespaces;
  for (const Doc& d : docs) {
    if (d.kind() == "Namespace") namespaces.insert(d.name());
  }
  for (const Doc& d : docs) {
    INFO(d.file << " " << d.kind() << " " << d.name());
    CHECK_FALSE(d.node["apiVersion"].as<std::string>("").empty());
    CHECK_FALSE(d.kind().empty());
    CHECK_FALSE(d.name().empty());
    const bool cluster_scoped =
        d.kind() == "Namespace" || d.kind() == "ClusterRole" || d.kind() == "ClusterRoleBinding" ||
        d.kind() == "CustomResourceDefinition" || d.kind() == "NodeFeatureRule" ||
        d.kind() == "DeviceClass" || d.kind() == "CSIDriver" || d.kind() == "ClusterNeuronCache";
    // kube-system exists on every cluster (the scheduler's auth-reader binding lives there), and
    // default (deploy/caches/'s samples are a user's objects).
    if (!cluster_scoped && d.ns() != "kube-system" && d.ns() != "default") {
      CHECK(namespaces.count(d.ns()) == 1);
    }
  }
}

TEST_CASE("DaemonSets schedule on Neuron nodes and run what the binaries accept", "[deploy]") {
  const std::vector<Doc> docs = LoadAll();
  std::set<std::string> accounts;
  for (const Doc& d : docs) {
    if (d.kind() == "ServiceAccount") accounts.insert(d.ns() + "/" + d.name());
  }
  std::set<std::string> shapes;
  for (const topology::Shape& s : topology::AllShapes()) shapes.insert(s.instance_type);
  std::map<std::string, std::set<std::string>> help;
  int plugins = 0, agents = 0;
  for (const Doc& d : docs) {
    if (d.kind() != "DaemonSet") continue;
    INFO(d.file << " " << d.name());
    const YAML::Node tmpl = d.node["spec"]["template"];
    const YAML::Node spec = tmpl["spec"];
    for (const auto& kv : d.node["spec"]["selector"]["matchLabels"]) {
      CHECK(tmpl["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>("") ==
            kv.second.as<std::string>());
    }
    CHECK(accounts.count(d.ns() + "/" + spec["serviceAccountName"].as<std::string>("")) == 1);
    CHECK(spec["priorityClassName"].as<std::string>("") == "system-node-critical");
    bool tolerates = false;
    for (const YAML::Node& t : spec["tolerations"]) {
      tolerates |= t["key"].as<std::string>("") == "aws.amazon.com/neuron" &&
                   t["effect"].as<std::string>("") == "NoSchedule" &&
                   t["operator"].as<std::string>("") == "Exists";
    }
    CHECK(tolerates);

    REQUIRE(spec["containers"].size() == 1);
    const YAML::Node c = spec["containers"][0];
    const std::string command = c["command"][0].as<std::string>("");
    const std::string binary = fs::path(command).filename().string();
    CHECK(c["image"].as<std::string>("") == binary + kImageTag);
    REQUIRE((binary == "neuron-node-agent" || binary == "neuron-device-plugin"));
    CHECK(command == "/usr/local/bin/" + binary);
    if (!help.count(binary)) help[binary] = HelpFlags(binary);
    REQUIRE(help[binary].count("help") == 1);  // the binary ran
    const std::map<std::string, std::string> args = Args(c);
    for (const auto& [flag, value] : args) {
      INFO("--" << flag);
      CHECK(help[binary].count(flag) == 1);
    }
    if (args.count("cache-dir")) {  // the cache directory and the kubelet's, at their host paths
      const std::map<std::string, std::string> m = Mounts(spec, c);
      CHECK(m.count(args.at("cache-dir")) == 1);
      if (m.count(args.at("cache-dir"))) {
        CHECK(m.at(args.at("cache-dir")) == "hostPath:" + args.at("cache-dir"));
      }
      REQUIRE(args.count("kubelet-dir") == 1);
      CHECK(m.count(args.at("kubelet-dir")) == 1);
      CHECK(c["securityContext"]["privileged"].as<bool>(false));
    }
    bool node_name = false;
    for (const YAML::Node& e : c["env"]) {
      node_name |= e["name"].as<std::string>("") == "NODE_NAME" &&
                   e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>("") == "spec.nodeName";
    }
    CHECK(node_name);

    // Node selection: never a label our agent publishes (it would have to run first).
    const std::set<std::string> keys = SelectedKeys(spec);
    for (const std::string& k : keys) {
      INFO(k);
      CHECK(k.rfind(agent::kLabelPrefix, 0) != 0);
    }
    const bool emulated = args.count("emulate") == 1;
    if (emulated) {
      CHECK(args.at("emulate") == "trn1.32xlarge");
      CHECK(keys == std::set<std::string>{kEmulatedLabel});
    } else {
      CHECK(keys.count(kPciLabel) == 1);
      CHECK(keys.count(kEmulatedLabel) == 0);
      std::set<std::string> types;
      for (const YAML::Node& t : Terms(spec)) {
        for (const YAML::Node& e : t["matchExpressions"]) {
          if (e["key"].as<std::string>() != "node.kubernetes.io/instance-type") continue;
          for (const YAML::Node& v : e["values"]) types.insert(v.as<std::string>());
        }
      }
      CHECK(types == shapes);  // every Neuron shape we model, nothing else
    }

    // Mounts behind the paths the flags name.
    const std::map<std::string, std::string> mounts = Mounts(spec, c);
    for (const auto& [path, volume] : mounts) CHECK(volume != "MISSING");
    if (args.count("host-root")) {
      const std::string root = args.at("host-root");
      CHECK(mounts.count(root + "/sys") == 1);
      if (mounts.count(root + "/sys")) CHECK(mounts.at(root + "/sys") == "hostPath:/sys");
    }
    if (args.count("emulate-dir")) CHECK(mounts.count(args.at("emulate-dir")) == 1);
    if (args.count("features-dir")) {
      CHECK(mounts.count(args.at("features-dir")) == 1);
      CHECK(mounts.at(args.at("features-dir")) == "hostPath:" + args.at("features-dir"));
    }
    if (binary == "neuron-device-plugin") {
      ++plugins;
      CHECK(args.count("device-plugin-dir") == 1);
      CHECK(args.count("pod-resources-socket") == 1);
      const std::string dp = args.count("device-plugin-dir") ? args.at("device-plugin-dir") : "";
      const std::string pr =
          fs::path(args.count("pod-resources-socket") ? args.at("pod-resources-socket") : "")
              .parent_path()
              .string();
      CHECK(mounts.count(dp) == 1);
      CHECK(mounts.count(pr) == 1);
      if (mounts.count(dp)) CHECK(mounts.at(dp) == "hostPath:/var/lib/kubelet/device-plugins");
      if (mounts.count(pr)) CHECK(mounts.at(pr) == "hostPath:/var/lib/kubelet/pod-resources");
      if (!emulated) CHECK(args.count("host-root") == 1);
    } else {
      ++agents;
      // PodResources (the neuron_core_allocation series): the socket's directory, or the whole
      // kubelet dir holding it, comes from the host's.
      REQUIRE(args.count("pod-resources-socket") == 1);
      const std::string socket = args.at("pod-resources-socket");
      const std::string pr = fs::path(socket).parent_path().string();
      const bool own = mounts.count(pr) == 1 && mounts.at(pr) == "hostPath:" + pr;
      const bool whole = mounts.count("/var/lib/kubelet") == 1 &&
                         mounts.at("/var/lib/kubelet") == "hostPath:/var/lib/kubelet" &&
                         absl::StartsWith(socket, "/var/lib/kubelet/");
      CAPTURE(socket);
      CHECK((own || whole));
    }
  }
  CHECK(plugins == 2);  // hardware + emulated
  CHECK(agents == 2);
}

TEST_CASE("The device plugin's RBAC is exactly what it calls", "[deploy]") {
  const std::vector<Doc> docs = LoadAll();
  std::map<std::string, YAML::Node> roles;
  for (const Doc& d : docs) {
    if (d.kind() == "ClusterRole") roles[d.name()] = d.node;
  }
  int checked = 0;
  for (const Doc& ds : docs) {
    if (ds.kind() != "DaemonSet") continue;
    const YAML::Node spec = ds.node["spec"]["template"]["spec"];
    if (spec["containers"][0]["command"][0].as<std::string>("").find("neuron-device-plugin") ==
        std::string::npos) {
      continue;
    }
    INFO(ds.file);
    const std::string sa = spec["serviceAccountName"].as<std::string>();
    std::vector<std::string> bound;
    for (const Doc& b : docs) {
      if (b.kind() != "ClusterRoleBinding") continue;
      for (const YAML::Node& s : b.node["subjects"]) {
        if (s["kind"].as<std::string>("") == "ServiceAccount" &&
            s["name"].as<std::string>() == sa && s["namespace"].as<std::string>("") == ds.ns()) {
          bound.push_back(b.node["roleRef"]["name"].as<std::string>());
        }
      }
    }
    REQUIRE(bound.size() == 1);
    REQUIRE(roles.count(bound[0]) == 1);
    const YAML::Node rules = roles[bound[0]]["rules"];
    // With compiled-model caches (--cache-dir), four more rules: the cache API, pull secrets
    // (get only) and events.
    const bool caches = Args(spec["containers"][0]).count("cache-dir") == 1;
    REQUIRE(rules.size() == (caches ? 5 : 1));
    for (size_t i = 1; i < rules.size(); ++i) {
      const auto resources = rules[i]["resources"].as<std::vector<std::string>>();
      const auto verbs = rules[i]["verbs"].as<std::vector<std::string>>();
      if (resources == std::vector<std::string>{"secrets"}) {
        CHECK(verbs == std::vector<std::string>{"get"});
      }
      for (const std::string& v : verbs) CHECK(v != "delete");
    }
    CHECK(rules[0]["apiGroups"].as<std::vector<std::string>>() == std::vector<std::string>{""});
    CHECK(rules[0]["resources"].as<std::vector<std::string>>() == std::vector<std::string>{"pods"});
    std::vector<std::string> verbs = rules[0]["verbs"].as<std::vector<std::string>>();
    std::sort(verbs.begin(), verbs.end());
    CHECK(verbs == std::vector<std::string>{"get", "list", "patch", "watch"});
    ++checked;
  }
  CHECK(checked == 2);
}

// The ClusterRoles bound to `sa` of namespace `ns`, by name.
std::vector<std::string> BoundRoles(const std::vector<Doc>& docs, const std::string& ns,
                                    const std::string& sa) {
  std::vector<std::string> bound;
  for (const Doc& b : docs) {
    if (b.kind() != "ClusterRoleBinding") continue;
    for (const YAML::Node& s : b.node["subjects"]) {
      if (s["kind"].as<std::string>("") == "ServiceAccount" && s["name"].as<std::string>() == sa &&
          s["namespace"].as<std::string>("") == ns) {
        bound.push_back(b.node["roleRef"]["name"].as<std::string>());
      }
    }
  }
  return bound;
}

TEST_CASE(
    "The node agent's RBAC is nodes get and patch (its UltraServer labels), and the cache "
    "API with caches",
    "[deploy]") {
  const std::vector<Doc> docs = LoadAll();
  std::map<std::string, YAML::Node> roles;
  for (const Doc& d : docs) {
    if (d.kind() == "ClusterRole") roles[d.name()] = d.node;
  }
  int checked = 0;
  for (const Doc& ds : docs) {
    if (ds.kind() != "DaemonSet") continue;
    const YAML::Node spec = ds.node["spec"]["template"]["spec"];
    if (spec["containers"][0]["command"][0].as<std::string>("").find("neuron-node-agent") ==
        std::string::npos) {
      continue;
    }
    INFO(ds.file);
    // The token is mounted: the agent patches its Node through the API.
    CHECK(spec["automountServiceAccountToken"].as<std::string>("true") == "true");
    const std::vector<std::string> bound =
        BoundRoles(docs, ds.ns(), spec["serviceAccountName"].as<std::string>());
    REQUIRE(bound.size() == 1);
    REQUIRE(roles.count(bound[0]) == 1);
    const YAML::Node rules = roles[bound[0]]["rules"];
    // With compiled-model caches (--cache-dir), four more rules: the cache API, pull secrets
    // (get only) and events.
    const bool caches = Args(spec["containers"][0]).count("cache-dir") == 1;
    REQUIRE(rules.size() == (caches ? 5 : 1));
    for (size_t i = 1; i < rules.size(); ++i) {
      const auto resources = rules[i]["resources"].as<std::vector<std::string>>();
      const auto verbs = rules[i]["verbs"].as<std::vector<std::string>>();
      if (resources == std::vector<std::string>{"secrets"}) {
        CHECK(verbs == std::vector<std::string>{"get"});
      }
      for (const std::string& v : verbs) CHECK(v != "delete");
    }
    CHECK(rules[0]["apiGroups"].as<std::vector<std::string>>() == std::vector<std::string>{""});
    CHECK(rules[0]["resources"].as<std::vector<std::string>>() ==
          std::vector<std::string>{"nodes"});
    std::vector<std::string> verbs = rules[0]["verbs"].as<std::vector<std::string>>();
    std::sort(verbs.begin(), verbs.end());
    CHECK(verbs == std::vector<std::string>{"get", "patch"});
    ++checked;
  }
  CHECK(checked == 2);  // hardware + emulated
}

TEST_CASE("Every workload runs its binary's own image, as the image scripts name them",
          "[deploy]") {
  auto read = [](const std::string& rel) {
    std::ifstream f(SourceDir() + "/" + rel);
    std::stringstream text;
    text << f.rdbuf();
    return text.str();
  };
  const std::string build = read("scripts/build-images.sh");
  const std::string dockerfile = read("images/Dockerfile");
  int checked = 0;
  for (const Doc& d : LoadAll()) {
    for (const YAML::Node& c : At(d.node, {"spec", "template", "spec", "containers"})) {
      const std::string command = c["command"][0].as<std::string>("");
      if (command.rfind("/usr/local/bin/neuron-", 0) != 0) continue;
      const std::string binary = fs::path(command).filename().string();
      CAPTURE(d.file, binary);
      CHECK(c["image"].as<std::string>("") == binary + kImageTag);
      // build-images.sh builds an image for it; the Dockerfile names it in its usage line.
      CHECK(build.find(binary) != std::string::npos);
      ++checked;
    }
  }
  CHECK(checked >= 5);
  CHECK(dockerfile.find("--build-arg BINARY=neuron-operator -t neuron-operator:dev") !=
        std::string::npos);
  CHECK(dockerfile.find("/usr/local/bin/entrypoint") != std::string::npos);
}

}  // namespace
}  // namespace neuron
