#include "lib/k8s/resource.h"

#include "absl/strings/str_cat.h"

namespace neuron::k8s {

std::string ResourceRef::GroupVersion() const {
  return group.empty() ? version : absl::StrCat(group, "/", version);
}

std::string ResourcePath(const ResourceRef& ref, const std::string& ns, const std::string& name,
                         const std::string& subresource) {
  std::string p = ref.group.empty() ? absl::StrCat("/api/", ref.version)
                                    : absl::StrCat("/apis/", ref.group, "/", ref.version);
  if (ref.namespaced && !ns.empty()) absl::StrAppend(&p, "/namespaces/", ns);
  absl::StrAppend(&p, "/", ref.resource);
  if (!name.empty()) {
    absl::StrAppend(&p, "/", name);
    if (!subresource.empty()) absl::StrAppend(&p, "/", subresource);
  }
  return p;
}

std::string QueryEscape(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace neuron::k8s
