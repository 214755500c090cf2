// File: lib/dra/claim_allocation.cc
#include "lib/dra/claim_allocation.h"

#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "lib/base/json_access.h"
#include "lib/dra/names.h"
#include "lib/dra/neuron_config.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr absl::string_view kDevicePrefix = "neurondevice";
constexpr absl::string_view kCoreInfix = "-core";
constexpr int kMaxIndex = 1 << 16;  // far above any node; keeps arithmetic on it safe

// A decimal index without sign or leading zeros ("0", "12"), as DeviceName() writes it.
std::optional<int> ParseIndex(absl::string_view digits) {
  if (digits.empty() || digits.size() > 5 || (digits.size() > 1 && digits[0] == '0')) {
    return std::nullopt;
  }
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v >= kMaxIndex) return std::nullopt;
  return v;
}

// What the configs give one request: the last applicable config of each kind wins.
struct RequestConfig {
  std::optional<int> lnc;
  std::optional<int> ultraserver_set;
};

// An invalid config fails even if a later one overrides it, since it is a user error either way.
absl::StatusOr<RequestConfig> ConfigFor(const json& configs, const std::string& request,
                                        absl::string_view driver) {
  RequestConfig out;
  if (!configs.is_array()) {
    return out;
  }
  for (const json& config : configs) {
    const json* opaque = Member(config, "opaque");
    if (opaque == nullptr || StringMember(*opaque, "driver") != driver) {
      continue;
    }
    if (!ConfigApplies(config, request)) {
      continue;
    }
    const json& params = MemberOrNull(*opaque, "parameters");
    absl::StatusOr<OpaqueConfig> parsed = ParseOpaqueConfig(params.dump());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config for request \"", request, "\": ", parsed.status().message()));
    }
    if (parsed->neuron && parsed->neuron->logical_neuron_core) {
      out.lnc = parsed->neuron->logical_neuron_core;
    }
    if (parsed->ultraserver) {
      out.ultraserver_set = parsed->ultraserver->ultraserver_mode;
    }
  }
  return out;
}

absl::StatusOr<AllocatedDevice> ReadResult(const json& result, size_t i) {
  AllocatedDevice d;
  d.request = StringMember(result, "request");
  d.name = StringMember(result, "device");
  if (d.request.empty() || d.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("status.allocation.devices.results[", i, "] lacks request or device"));
  }
  absl::StatusOr<DeviceRef> ref = ParseDeviceName(d.name);
  if (!ref.ok()) return ref.status();
  d.ref = *ref;
  d.admin_access = BoolOf(Member(result, "adminAccess"));
  return d;
}

// UltraServerConfig configures the node's place in a set of nodes: only the node device, which
// stands for the whole node, can carry it.
absl::Status CheckUltraServerTarget(const AllocatedDevice& d, const RequestConfig& config) {
  if (!config.ultraserver_set || d.ref.node) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "UltraServerConfig configures request \"", d.request, "\", which was given device ", d.name,
      "; it applies only to the UltraServer node device (resourceType ", kResourceTypeNode,
      "): select it with device.attributes['neuron.aws.com'].resourceType == '", kResourceTypeNode,
      "'"));
}

// One CDI device per claim carries one environment: requests must agree.
absl::Status CheckAgreement(const std::string& name, const std::set<std::optional<int>>& lncs,
                            const std::set<std::optional<int>>& sets) {
  if (lncs.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ResourceClaim ", name,
        ": its requests are configured with different logicalNeuronCore values; one claim's "
        "containers share one NEURON_LOGICAL_NC_CONFIG"));
  }
  if (sets.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResourceClaim ", name,
                     ": its requests are configured with different UltraServerConfig "
                     "ultraserverMode values (or some with none); one claim's containers join "
                     "one UltraServer set"));
  }
  return absl::OkStatus();
}

}  // namespace

bool ConfigApplies(const json& config, const std::string& request) {
  const json* requests = Member(config, "requests");
  if (requests == nullptr || !requests->is_array() || requests->empty()) return true;
  const std::string parent = request.substr(0, request.find('/'));
  for (const json& r : *requests) {
    const std::string name = StringOf(r);
    if (name == request || name == parent) return true;
  }
  return false;
}

absl::StatusOr<DeviceRef> ParseDeviceName(std::string_view name) {
  const absl::string_view full(name.data(), name.size());
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "device \"", full.substr(0, 64),
        "\" is not one this driver publishes (neurondevice<N>, neurondevice<N>-core<M> or ",
        kNodeDeviceName, ")"));
  };
  if (full == kNodeDeviceName) {
    return DeviceRef{0, std::nullopt, true};
  }
  absl::string_view rest = full;
  if (!absl::ConsumePrefix(&rest, kDevicePrefix)) return bad();
  const size_t infix = rest.find(kCoreInfix);
  const std::optional<int> device = ParseIndex(rest.substr(0, infix));
  if (!device) return bad();
  DeviceRef ref{*device, std::nullopt};
  if (infix != absl::string_view::npos) {
    ref.core = ParseIndex(rest.substr(infix + kCoreInfix.size()));
    if (!ref.core) return bad();
  }
  return ref;
}

absl::StatusOr<ClaimAllocation> ReadClaimAllocation(const json& claim, std::string_view uid_view,
                                                    std::string_view driver_view,
                                                    std::string_view pool_view) {
  const std::string uid(uid_view), driver(driver_view), pool(pool_view);
  const std::string name = absl::StrCat(StringAt(claim, {"metadata", "namespace"}), "/",
                                        StringAt(claim, {"metadata", "name"}));
  if (StringAt(claim, {"metadata", "uid"}) != uid) {
    return absl::FailedPreconditionError(
        absl::StrCat("ResourceClaim ", name, " has UID ", StringAt(claim, {"metadata", "uid"}),
                     ", the kubelet asked for ", uid, ": the claim was deleted and recreated"));
  }
  const json& devices = MemberOrNull(claim, {"status", "allocation", "devices"});
  const json& results = MemberOrNull(devices, "results");
  if (!results.is_array()) {
    return absl::FailedPreconditionError(absl::StrCat("ResourceClaim ", name, " is not allocated"));
  }
  ClaimAllocation out;
  std::set<std::optional<int>> lncs, sets;
  for (size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    if (StringMember(r, "driver") != driver || StringMember(r, "pool") != pool) {
      continue;
    }
    absl::StatusOr<AllocatedDevice> d = ReadResult(r, i);
    if (!d.ok()) {
      return d.status();
    }
    absl::StatusOr<RequestConfig> config =
        ConfigFor(MemberOrNull(devices, "config"), d->request, driver);
    if (!config.ok()) {
      return config.status();
    }
    if (absl::Status s = CheckUltraServerTarget(*d, *config); !s.ok()) {
      return s;
    }
    lncs.insert(config->lnc);
    sets.insert(config->ultraserver_set);
    out.logical_neuron_core = config->lnc;
    out.ultraserver_set = config->ultraserver_set;
    out.devices.push_back(*std::move(d));
  }
  if (out.devices.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("ResourceClaim ", name, " holds no ", driver, " device of pool ", pool));
  }
  if (absl::Status s = CheckAgreement(name, lncs, sets); !s.ok()) {
    return s;
  }
  return out;
}

}  // namespace neuron::dra
