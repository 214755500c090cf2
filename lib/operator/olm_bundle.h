// File: lib/operator/olm_bundle.h
// An OLM bundle (registry+v1) and a file-based catalog for it, made from the install manifests
// (`kubectl kustomize deploy/operator`): what `neuron-operator bundle` and `make bundle` write.
// The CSV's install strategy is the kustomize Deployment and RBAC as they are, so OLM installs
// exactly what `make deploy` does.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

struct BundleOptions {
  std::string package = "neuron-operator";
  std::string version;  // semver without "v": 0.1.0
  std::string channel = "stable";
  std::string operator_image;  // replaces the Deployment's operator image when set
  std::string replaces;        // the CSV this one upgrades from ("" = first release)
  std::string bundle_image;    // the catalog's reference to the bundle image
};

// A file of the bundle or catalog, relative to its root directory.
struct BundleFile {
  std::string path;
  std::string content;
};

// Kinds a registry+v1 bundle may carry besides the CSV and CRDs (OLM refuses others).
bool BundleSupportsKind(const std::string& kind);

// manifests/ (the CSV, each CRD, supported extras such as a PrometheusRule), metadata/
// annotations.yaml and bundle.Dockerfile. InvalidArgument naming what is missing or wrong
// (no Deployment, no CRD, an unbound service account, a bad version).
absl::StatusOr<std::vector<BundleFile>> MakeBundle(const std::vector<nlohmann::json>& manifests,
                                                   const BundleOptions& opts);

// A file-based catalog (<package>/catalog.yaml: olm.package, olm.channel, olm.bundle),
// catalog.Dockerfile, and install.yaml (CatalogSource, OperatorGroup, Subscription) for a
// cluster: `index_image` is the catalog image those objects point at.
absl::StatusOr<std::vector<BundleFile>> MakeCatalog(const std::vector<nlohmann::json>& manifests,
                                                    const BundleOptions& opts,
                                                    const std::string& index_image);

}  // namespace neuron::op
