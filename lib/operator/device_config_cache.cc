// File: lib/operator/device_config_cache.cc
#include "lib/operator/device_config_cache.h"

#include "lib/base/json_access.h"
#include "lib/operator/device_config_syntax.h"

namespace neuron::op::internal {

using nlohmann::json;

void ReadCompileCache(const json& spec, DeviceConfigSpec& s, std::vector<FieldError>& problems) {
  const json& v = MemberOrNull(spec, "compileCache");
  if (v.is_null()) return;
  if (!v.is_object()) {
    problems.push_back({"spec.compileCache", "must be an object {enabled, hostPath}"});
    return;
  }
  if (const json& e = MemberOrNull(v, "enabled"); e.is_boolean()) {
    s.compile_cache.enabled = e.get<bool>();
  } else if (!e.is_null()) {
    problems.push_back({"spec.compileCache.enabled", "must be true or false"});
  }
  if (const json& p = MemberOrNull(v, "hostPath"); p.is_string()) {
    s.compile_cache.host_path = p.get<std::string>();
    // "/var/lib/neuron/cache/" names the same directory: one spelling for the flag and volume.
    std::string& path = s.compile_cache.host_path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
  } else if (!p.is_null()) {
    problems.push_back({"spec.compileCache.hostPath", "must be a string"});
  }
}

void CheckCompileCache(const DeviceConfigSpec& s, std::vector<FieldError>& errors) {
  // The same rule as kubeletRootDir: an absolute path a hostPath volume can name.
  if (!IsKubeletRootDir(s.compile_cache.host_path)) {
    errors.push_back({"spec.compileCache.hostPath",
                      "must be an absolute directory path other than / (no '..', no whitespace)"});
  }
}

}  // namespace neuron::op::internal
