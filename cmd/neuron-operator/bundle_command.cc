// File: cmd/neuron-operator/bundle_command.cc
#include "cmd/neuron-operator/bundle_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cmd/neuron-operator/subcommand.h"
#include "lib/base/flags.h"
#include "lib/operator/olm_bundle.h"
#include "lib/operator/yaml_input.h"

namespace neuron::op {
namespace {

namespace fs = std::filesystem;

int Fail(const char* command, const std::string& msg) {
  std::fprintf(stderr, "neuron-operator %s: %s\n", command, msg.c_str());
  return 2;
}

struct Common {
  std::string file, out;
  BundleOptions opts;
};

void AddCommonFlags(FlagSet& flags, Common& c) {
  flags.String(
      "filename", &c.file,
      "Install manifests, e.g. `kubectl kustomize deploy/operator` output (-f); - = stdin.");
  flags.String("out", &c.out, "Directory to write (created; files in it are replaced).");
  flags.String("version", &c.opts.version, "Bundle version, semantic: 0.1.0.");
  flags.String("package", &c.opts.package, "OLM package name.");
  flags.String("channel", &c.opts.channel, "Channel (also the default channel).");
  flags.String("replaces", &c.opts.replaces,
               "The CSV this version upgrades from, e.g. neuron-operator.v0.0.9.");
}

absl::StatusOr<std::vector<nlohmann::json>> ReadManifests(const std::string& file) {
  absl::StatusOr<std::string> text = ReadInput(file);
  if (!text.ok()) return text.status();
  return ParseYamlDocuments(*text);
}

absl::Status Write(const std::string& dir, const std::vector<BundleFile>& files) {
  for (const BundleFile& f : files) {
    const fs::path path = fs::path(dir) / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::trunc);
    out << f.content;
    if (ec || !out.good()) return absl::InternalError("cannot write " + path.string());
  }
  return absl::OkStatus();
}

int Run(const char* command, const Common& c,
        const absl::StatusOr<std::vector<BundleFile>>& files) {
  if (!files.ok()) return Fail(command, std::string(files.status().message()));
  if (absl::Status st = Write(c.out, *files); !st.ok()) {
    return Fail(command, std::string(st.message()));
  }
  for (const BundleFile& f : *files) std::printf("%s/%s\n", c.out.c_str(), f.path.c_str());
  return 0;
}

}  // namespace

int BundleCommand(int argc, char** argv) {
  Common c;
  c.out = "build/bundle";
  FlagSet flags("neuron-operator bundle",
                "Writes an OLM bundle (registry+v1: manifests/ with the ClusterServiceVersion and\n"
                "CRDs, metadata/annotations.yaml, bundle.Dockerfile) made from the install\n"
                "manifests. Objects a bundle cannot carry (Namespace, NodeFeatureRule) are left\n"
                "out: OLM makes the namespace, the operator its NFD rule.");
  AddCommonFlags(flags, c);
  flags.String("image", &c.opts.operator_image, "Operator image for the CSV (default: as given).");
  if (auto exit_code = ParseSubcommandFlags(flags, "bundle", argc, argv)) return *exit_code;
  if (c.file.empty()) return Fail("bundle", "-f FILE is required (the install manifests)");
  auto manifests = ReadManifests(c.file);
  if (!manifests.ok()) {
    return Fail("bundle", c.file + ": " + std::string(manifests.status().message()));
  }
  return Run("bundle", c, MakeBundle(*manifests, c.opts));
}

int CatalogCommand(int argc, char** argv) {
  Common c;
  c.out = "build/catalog";
  std::string index_image;
  FlagSet flags(
      "neuron-operator catalog",
      "Writes a file-based OLM catalog for the bundle (<package>/catalog.yaml), the\n"
      "Dockerfile of its index image, and install.yaml: the CatalogSource, OperatorGroup\n"
      "and Subscription a cluster applies to install from it.");
  AddCommonFlags(flags, c);
  flags.String("bundle-image", &c.opts.bundle_image, "The bundle image the catalog points at.");
  flags.String("index-image", &index_image, "The catalog image the CatalogSource runs.");
  if (auto exit_code = ParseSubcommandFlags(flags, "catalog", argc, argv)) return *exit_code;
  if (c.file.empty()) return Fail("catalog", "-f FILE is required (the install manifests)");
  auto manifests = ReadManifests(c.file);
  if (!manifests.ok()) {
    return Fail("catalog", c.file + ": " + std::string(manifests.status().message()));
  }
  return Run("catalog", c, MakeCatalog(*manifests, c.opts, index_image));
}

}  // namespace neuron::op
