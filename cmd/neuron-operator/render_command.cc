// File: cmd/neuron-operator/render_command.cc
#include "cmd/neuron-operator/render_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cmd/neuron-operator/subcommand.h"
#include "lib/base/flags.h"
#include "lib/base/json_access.h"
#include "lib/operator/children.h"
#include "lib/operator/device_config.h"
#include "lib/operator/render.h"
#include "lib/operator/yaml_input.h"

namespace neuron::op {
namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "neuron-operator render: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int RenderCommand(int argc, char** argv) {
  std::string file;
  std::string nfd_group = "nfd.k8s-sigs.io";
  std::string dra_version;
  bool kmm = true, service_monitor = false, dra = false;
  OperatorSettings settings;
  FlagSet flags("neuron-operator render",
                "Prints, as YAML, every object a reconcile would apply for a DeviceConfig,\n"
                "without a cluster. The cluster's optional APIs are given by flags.");
  flags.String("filename", &file, "DeviceConfig YAML file (-f); - reads stdin.");
  flags.String("namespace", &settings.ns, "The operator's namespace.", "OPERATOR_NAMESPACE");
  flags.String("nfd-group", &nfd_group,
               "NodeFeatureRule group served: nfd.k8s-sigs.io, nfd.openshift.io, or empty.");
  flags.Bool("kmm", &kmm, "KMM (kmm.sigs.x-k8s.io/v1beta1 Module) is served.");
  flags.Bool("service-monitor", &service_monitor,
             "monitoring.coreos.com ServiceMonitor is served.");
  flags.Bool("dra", &dra, "resource.k8s.io/v1 is served (same as --dra-version=v1).");
  flags.String("dra-version", &dra_version,
               "The resource.k8s.io version served: v1, v1beta1, or empty (not served).");
  flags.String("node-agent-image", &settings.default_node_agent_image,
               "Node agent image when the DeviceConfig names none.");
  if (auto exit_code = ParseSubcommandFlags(flags, "render", argc, argv)) return *exit_code;
  if (file.empty()) return Fail("-f FILE is required (the DeviceConfig to render)");
  if (nfd_group != "" && nfd_group != "nfd.k8s-sigs.io" && nfd_group != "nfd.openshift.io") {
    return Fail("--nfd-group must be nfd.k8s-sigs.io, nfd.openshift.io or empty");
  }
  if (dra_version.empty() && dra) dra_version = "v1";
  if (dra_version != "" && dra_version != "v1" && dra_version != "v1beta1") {
    return Fail("--dra-version must be v1, v1beta1 or empty");
  }
  absl::StatusOr<std::string> text = ReadInput(file);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  absl::StatusOr<std::vector<nlohmann::json>> docs = ParseYamlDocuments(*text);
  if (!docs.ok()) return Fail(file + ": " + std::string(docs.status().message()));
  std::vector<Child> all;
  int configs = 0;
  for (const nlohmann::json& doc : *docs) {
    if (StringMember(doc, "kind") != kKind) continue;  // any other shape is not ours
    ++configs;
    absl::StatusOr<DeviceConfig> dc = ParseDeviceConfig(doc);
    if (!dc.ok()) return Fail(file + ": " + std::string(dc.status().message()));
    if (dc->ns.empty()) dc->ns = settings.ns;  // kubectl apply would use the current namespace
    if (dc->uid.empty()) dc->uid = "00000000-0000-0000-0000-000000000000";  // set by the server
    if (std::vector<FieldError> errors = ValidateDeviceConfig(*dc); !errors.empty()) {
      return Fail(dc->name + ": " + JoinFieldErrors(errors));
    }
    ClusterApis apis;
    apis.kmm = kmm;
    apis.nfd_group = nfd_group;
    apis.service_monitor = service_monitor;
    apis.dra_version = dra_version;
    std::vector<Child> children = DesiredChildren(*dc, apis, settings);
    all.insert(all.end(), children.begin(), children.end());
  }
  if (configs == 0) return Fail(file + ": no DeviceConfig in it");
  std::fputs(RenderYaml(all).c_str(), stdout);
  return 0;
}

}  // namespace neuron::op
