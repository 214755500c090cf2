// File: lib/k8s/object_fields.cc
#include "lib/k8s/object_fields.h"

#include <utility>

namespace neuron::k8s {

JsonKeep::Member IdentityMetadata(std::vector<JsonKeep::Member> extra) {
  std::vector<JsonKeep::Member> members = {
      {"name"}, {"namespace"}, {"uid"}, {"resourceVersion"}, {"generation"}};
  for (JsonKeep::Member& m : extra) members.push_back(std::move(m));
  return {"metadata", JsonKeep::Of(std::move(members))};
}

const JsonKeep& WithoutBookkeeping() {
  using Member = JsonKeep::Member;
  static const JsonKeep* keep = new JsonKeep(JsonKeep::AllBut({{
      "metadata",
      JsonKeep::AllBut(
          {Member::Drop("managedFields"),
           {"annotations",
            JsonKeep::AllBut({Member::Drop("kubectl.kubernetes.io/last-applied-configuration")})}}),
  }}));
  return *keep;
}

}  // namespace neuron::k8s
