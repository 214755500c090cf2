// File: tests/fakes/apiserver/controllers.cc
// What kube-controller-manager does on every real cluster and tests must therefore expect: its
// root-ca-cert-publisher puts a `kube-root-ca.crt` ConfigMap into every namespace and puts it back
// when it is deleted. A test that assumes a new namespace is empty fails on a real cluster, so the
// fake does the same. Simplification: upstream publishes asynchronously, shortly after the
// Namespace is created; here it is the very next resourceVersion.
#include "absl/strings/str_split.h"
#include "tests/fakes/apiserver/api_core.h"

namespace neuron::fakes::apiserver {
namespace {

constexpr char kRootCaName[] = "kube-root-ca.crt";

// Not a usable CA: nothing in the fake speaks TLS. Tests only need the object to exist.
constexpr char kFakeCaPem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "ZmFrZS1hcGlzZXJ2ZXIgcm9vdCBDQSAobm90IGEgcmVhbCBjZXJ0aWZpY2F0ZSk=\n"
    "-----END CERTIFICATE-----\n";

}  // namespace

void ApiCore::PublishRootCa(const std::string& ns) {
  const ResourceType* cm = registry_.Find("", "v1", "configmaps");
  if (cm == nullptr) return;
  ResourcePath rp;
  rp.type = *cm;
  rp.ns = ns;
  rp.name = kRootCaName;
  if (store_.Find(rp.Key()) != nullptr) return;
  json obj = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", kRootCaName},
                {"annotations",
                 {{"kubernetes.io/description",
                   "Contains a CA bundle that can be used to verify the kube-apiserver when using "
                   "internal endpoints such as the internal service IP or kubernetes.default.svc. "
                   "No other usage is guaranteed across distributions of Kubernetes clusters."}}}}},
              {"data", {{"ca.crt", kFakeCaPem}}}};
  CreateObject(rp, std::move(obj), WriteCtx{"kube-controller-manager", "Update", ""}, false);
}

void ApiCore::RepublishRootCa(const std::string& removed_key) {
  // Store keys are "group/plural/namespace/name".
  const std::vector<std::string> k = absl::StrSplit(removed_key, '/');
  if (k.size() != 4 || !k[0].empty() || k[1] != "configmaps" || k[3] != kRootCaName) return;
  // Only while the namespace lives and is not terminating (its deletion removes the contents).
  const json* ns = store_.Find(StoreKey("", "namespaces", "", k[2]));
  if (ns == nullptr || ns->contains("/metadata/deletionTimestamp"_json_pointer)) return;
  PublishRootCa(k[2]);
}

}  // namespace neuron::fakes::apiserver
