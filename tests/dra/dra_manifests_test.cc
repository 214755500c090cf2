// deploy/dra: the DeviceClasses and the example ResourceClaimTemplates are well-formed
// resource.k8s.io/v1, refer to each other correctly, and use exactly the attribute names and
// values lib/dra publishes (a misspelt attribute would not fail anywhere: the claim would just
// never be satisfied, or abort allocation with a CEL error).
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "lib/assignment/ids.h"
#include "lib/dra/names.h"
#include "lib/dra/neuron_config.h"
#include "lib/dra/resource_slice.h"
#include "lib/topology/shapes.h"
#include "nlohmann/json.hpp"
#include "tests/dra/resource_v1_schema.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

struct Doc {
  std::string file;
  YAML::Node node;
  std::string kind() const { return node["kind"].as<std::string>(""); }
  std::string name() const { return node["metadata"]["name"].as<std::string>(""); }
};

std::filesystem::path DeployDir() {
  const char* src = std::getenv("NEURON_SOURCE_DIR");
  return std::filesystem::path(src != nullptr ? src : "..") / "deploy" / "dra";
}

std::vector<Doc> Load(const std::filesystem::path& dir) {
  std::vector<Doc> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    for (const YAML::Node& n : YAML::LoadAllFromFile(e.path().string())) {
      if (!n.IsNull()) out.push_back({e.path().filename().string(), n});
    }
  }
  return out;
}

// Scalars become numbers or booleans when they read as such (as a YAML-to-JSON decoder would).
json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    json out = json::object();
    for (const auto& kv : n) out[kv.first.as<std::string>()] = ToJson(kv.second);
    return out;
  }
  if (n.IsSequence()) {
    json out = json::array();
    for (const auto& v : n) out.push_back(ToJson(v));
    return out;
  }
  if (!n.IsScalar()) return nullptr;
  if (n.Tag() != "!") {  // unquoted
    int64_t i = 0;
    bool b = false;
    if (YAML::convert<int64_t>::decode(n, i)) return i;
    if (YAML::convert<bool>::decode(n, b)) return b;
  }
  return n.as<std::string>();
}

// Every attribute name (qualified, "<domain>/<name>") and resourceType value lib/dra publishes,
// over every shape, with and without partitions and EFA pairing.
struct Published {
  std::set<std::string> attributes;
  std::set<std::string> resource_types;
};

Published PublishedByLibDra() {
  Published out;
  for (const topology::Shape& shape : topology::AllShapes()) {
    for (bool partitionable : {false, true}) {
      NodeDeviceInfo n;
      n.node_name = "node";
      n.shape = &shape;
      n.neuron_driver_version = "2.24.7.0";
      n.dra_driver_version = "0.1.0";
      for (int d = 0; d < shape.devices; ++d) n.efa_bdfs[d] = "0000:" + std::to_string(d) + ":00.0";
      n.network_node_layers = {"nn-1", "nn-2", "nn-3"};
      if (shape.instance_type == "trn2u.48xlarge") {  // an UltraServer node: the node device
        n.ultraserver = ultraserver::Identity{};
        n.ultraserver->modes = {1, 2, 4};
        n.ultraserver->server_id_2 = "aaaa";
        n.ultraserver->server_id_4 = "bbbb";
        n.ultraserver->node_id_2 = 1;
        n.ultraserver->node_id_4 = 3;
      }
      auto slices = BuildResourceSlices(n, {.partitionable = partitionable});
      REQUIRE(slices.ok());
      for (const ResourceSliceModel& s : *slices) {
        for (const SliceDevice& d : s.devices) {
          for (const auto& [name, value] : d.attributes) {
            out.attributes.insert(
                name.find('/') == std::string::npos ? std::string(kDriverName) + "/" + name : name);
            if (name == "resourceType") out.resource_types.insert(value.text);
          }
        }
      }
    }
  }
  return out;
}

std::vector<std::string> CelExpressions(const YAML::Node& selectors) {
  std::vector<std::string> out;
  if (!selectors.IsSequence()) return out;
  for (const YAML::Node& s : selectors) out.push_back(s["cel"]["expression"].as<std::string>(""));
  return out;
}

std::vector<std::smatch> Matches(const std::string& text, const std::regex& re) {
  return {std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()};
}

// The attribute names, resourceType values, instance types and drivers a CEL expression names
// must be ones lib/dra publishes.
void CheckCel(const std::string& expr, const Published& published) {
  INFO(expr);
  static const std::regex attribute(R"(device\.attributes\[['"]([^'"]+)['"]\]\.([A-Za-z0-9_]+))");
  for (const std::smatch& m : Matches(expr, attribute)) {
    CHECK(published.attributes.count(m[1].str() + "/" + m[2].str()) == 1);
  }
  static const std::regex resource_type(R"(\.resourceType == '([^']*)')");
  for (const std::smatch& m : Matches(expr, resource_type)) {
    CHECK(published.resource_types.count(m[1].str()) == 1);
  }
  static const std::regex resource_types(R"(\.resourceType in \[([^\]]*)\])");
  static const std::regex quoted(R"('([^']*)')");
  for (const std::smatch& list : Matches(expr, resource_types)) {
    const std::string items = list[1].str();
    for (const std::smatch& m : Matches(items, quoted)) {
      CHECK(published.resource_types.count(m[1].str()) == 1);
    }
  }
  static const std::regex instance_type(R"(\.instanceType == '([^']*)')");
  for (const std::smatch& m : Matches(expr, instance_type)) {
    CHECK(topology::FindShape(m[1].str()) != nullptr);
  }
  static const std::regex driver(R"(device\.driver == '([^']*)')");
  for (const std::smatch& m : Matches(expr, driver)) CHECK(m[1].str() == kDriverName);
}

void CheckSchema(const Doc& d) {
  INFO(d.file << " " << d.kind() << " " << d.name());
  CHECK(d.node["apiVersion"].as<std::string>("") == "resource.k8s.io/v1");
  CHECK_FALSE(d.name().empty());
  std::vector<std::string> errors;
  testing::CheckV1Fields(d.node, d.kind(), "", errors);
  CHECK(errors == std::vector<std::string>{});
}

TEST_CASE(
    "DeviceClasses: v1 fields, one selector checking the driver first, the extended resource "
    "named") {
  const std::vector<Doc> classes = Load(DeployDir());
  const Published published = PublishedByLibDra();
  std::map<std::string, std::string> extended;  // class -> extendedResourceName
  std::set<std::string> names;
  for (const Doc& d : classes) {
    CheckSchema(d);
    REQUIRE(d.kind() == "DeviceClass");
    INFO(d.name());
    CHECK(names.insert(d.name()).second);
    const std::vector<std::string> cel = CelExpressions(d.node["spec"]["selectors"]);
    // One selector (each costs kube-scheduler one evaluation per device); the driver checked
    // first, so && keeps the attribute lookup from erroring on other drivers' devices.
    REQUIRE(cel.size() == 1);
    CHECK(cel[0].starts_with("device.driver == 'neuron.aws.com' && "));
    for (const std::string& e : cel) CheckCel(e, published);
    if (d.node["spec"]["extendedResourceName"]) {
      extended[d.name()] = d.node["spec"]["extendedResourceName"].as<std::string>();
    }
  }
  CHECK(names == std::set<std::string>{"neuron.aws.com", "neuroncore.aws.com",
                                       "extended-resource.neuron.aws.com"});
  CHECK(extended == std::map<std::string, std::string>{
                        {"extended-resource.neuron.aws.com", assignment::kNeuronResource}});
  CHECK(published.resource_types == std::set<std::string>{std::string(kResourceTypeDevice),
                                                          std::string(kResourceTypeCore),
                                                          std::string(kResourceTypeNode)});
}

void CheckTemplateDevices(const YAML::Node& devices, const Published& published,
                          const std::set<std::string>& classes) {
  std::set<std::string> requests;
  for (const YAML::Node& r : devices["requests"]) {
    CHECK(requests.insert(r["name"].as<std::string>("")).second);
    REQUIRE(r["exactly"].IsMap());
    const YAML::Node exactly = r["exactly"];
    CHECK(classes.count(exactly["deviceClassName"].as<std::string>("")) == 1);
    const std::string mode = exactly["allocationMode"].as<std::string>("ExactCount");
    CHECK((mode == "ExactCount" || mode == "All"));
    if (mode == "All") CHECK_FALSE(exactly["count"]);
    if (exactly["count"]) CHECK(exactly["count"].as<int64_t>(0) > 0);
    for (const std::string& e : CelExpressions(exactly["selectors"])) CheckCel(e, published);
  }
  for (const YAML::Node& c : devices["constraints"]) {
    for (const YAML::Node& r : c["requests"]) CHECK(requests.count(r.as<std::string>()) == 1);
    if (c["matchAttribute"]) {
      CHECK(published.attributes.count(c["matchAttribute"].as<std::string>()) == 1);
    }
  }
  for (const YAML::Node& c : devices["config"]) {
    for (const YAML::Node& r : c["requests"]) CHECK(requests.count(r.as<std::string>()) == 1);
    CHECK(c["opaque"]["driver"].as<std::string>("") == kDriverName);
    const std::string params = ToJson(c["opaque"]["parameters"]).dump();
    INFO(params);
    absl::StatusOr<OpaqueConfig> config = ParseOpaqueConfig(params);
    REQUIRE(config.ok());
    if (config->neuron) {
      CHECK(config->neuron->logical_neuron_core == 1);
    } else {
      CHECK((config->ultraserver->ultraserver_mode == 2 ||
             config->ultraserver->ultraserver_mode == 4));
    }
  }
}

// The claim templates a LeaderWorkerSet's pods name (leader and workers) are in the same file.
void CheckLeaderWorkerSet(const Doc& d, const std::set<std::string>& templates) {
  INFO(d.file << " " << d.name());
  CHECK(d.node["apiVersion"].as<std::string>("") == "leaderworkerset.x-k8s.io/v1");
  const YAML::Node lwt = d.node["spec"]["leaderWorkerTemplate"];
  int named = 0;
  for (const char* role : {"leaderTemplate", "workerTemplate"}) {
    for (const YAML::Node& c : lwt[role]["spec"]["resourceClaims"]) {
      CHECK(templates.count(c["resourceClaimTemplateName"].as<std::string>("")) == 1);
      ++named;
    }
  }
  CHECK(named == 2);
  // One UltraServer set per group: the exclusive topology is the node label of the set's size.
  const std::string key =
      d.node["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/exclusive-topology"]
          .as<std::string>("");
  CHECK(key == "neuron.amazonaws.com/ultraserver-server-id-" + lwt["size"].as<std::string>(""));
}

TEST_CASE("AWS's example templates: v1 requests under exactly, names that resolve") {
  const std::vector<Doc> docs = Load(DeployDir() / "examples");
  const Published published = PublishedByLibDra();
  std::set<std::string> classes;
  for (const Doc& d : Load(DeployDir())) classes.insert(d.name());
  std::set<std::string> names;
  std::map<std::string, std::set<std::string>> templates_by_file;
  for (const Doc& d : docs) {
    if (d.kind() == "LeaderWorkerSet") continue;
    CheckSchema(d);
    REQUIRE(d.kind() == "ResourceClaimTemplate");
    INFO(d.file);
    names.insert(d.name());
    templates_by_file[d.file].insert(d.name());
    CheckTemplateDevices(d.node["spec"]["spec"]["devices"], published, classes);
  }
  int lws = 0;
  for (const Doc& d : docs) {
    if (d.kind() != "LeaderWorkerSet") continue;
    CheckLeaderWorkerSet(d, templates_by_file[d.file]);
    ++lws;
  }
  CHECK(lws == 3);
  CHECK(names == std::set<std::string>{"1x4-connected-neurons", "all-neurons", "all-neurons-lnc-1",
                                       "us-2-node-config", "us-4-node-config",
                                       "us-and-lnc-config"});
  CHECK(published.attributes.count(DeviceGroupAttribute(4)) == 1);
  CHECK(published.attributes.count("neuron.aws.com/ultraserverServerId4") == 1);
  CHECK(published.attributes.count("neuron.aws.com/networkNodeLayer2") == 1);
}

TEST_CASE("the schema check catches v1beta1 spellings and typos") {
  const YAML::Node beta = YAML::Load(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: neurons
        deviceClassName: neuron.aws.com
      constraints:
      - requests: [neurons]
        matchAtribute: resource.aws.com/devicegroup4_id
)");
  std::vector<std::string> errors;
  testing::CheckV1Fields(beta, "ResourceClaimTemplate", "", errors);
  CHECK(errors ==
        std::vector<std::string>{"spec.spec.devices.requests[0].deviceClassName: unknown field of "
                                 "DeviceRequest",
                                 "spec.spec.devices.constraints[0].matchAtribute: unknown field of "
                                 "DeviceConstraint"});
}

}  // namespace
}  // namespace neuron::dra
