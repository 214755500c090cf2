// Fuzz target for lib/sysfs/parsers.h. The first byte picks the parser, the rest is the file
// contents. Besides "never crash", checks round-trip properties of accepted values.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/sysfs/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace neuron::sysfs;  // NOLINT(google-build-using-namespace): fuzz driver only
  switch (data[0] % 8) {
    case 0:
      if (auto v = ParseU64(text); v.ok()) {
        // Only plain decimal digits (plus one optional newline) are accepted, with their value.
        std::string body = text;
        if (!body.empty() && body.back() == '\n') body.pop_back();
        if (body.empty() || body.find_first_not_of("0123456789") != std::string::npos) std::abort();
        if (std::strtoull(body.c_str(), nullptr, 10) != *v) std::abort();
      }
      break;
    case 1:
      if (auto v = ParseCoreCount(text); v.ok() && (*v < 1 || *v > 1024)) std::abort();
      break;
    case 2:
      if (auto v = ParseConnectedDevices(text); v.ok()) {
        // Re-printing in the driver's format parses back to the same list.
        auto again = ParseConnectedDevices(absl::StrCat(absl::StrJoin(*v, ", "), "\n"));
        if (!again.ok() || *again != *v) std::abort();
      }
      break;
    case 3:
      if (auto v = ParsePowerUtilization(text); v.ok()) {
        if (v->min < 0 || v->max > 100 || v->avg < 0 || v->avg > 100) std::abort();
        if (v->valid && (v->avg < v->min || v->avg > v->max)) std::abort();
      }
      break;
    case 4:
      (void)ParseHexU32(text);
      break;
    case 5:
      if (auto v = ParseNumaNode(text); v.ok() && (*v < -1 || *v > 4095)) std::abort();
      break;
    case 7:
      // /opt/aws/neuron/logical_nc_config: an accepted value is in range and re-parses alone.
      if (auto v = ParseLogicalNcConfig(text); v.ok()) {
        if (*v < 1 || *v > 8) std::abort();
        auto again = ParseLogicalNcConfig(absl::StrCat("NEURON_LOGICAL_NC_CONFIG=", *v));
        if (!again.ok() || *again != *v) std::abort();
      }
      if (auto v = ParseLncValue(text); v.ok() && (*v < 1 || *v > 8)) std::abort();
      break;
    default:
      if (auto v = ParseToken(text); v.ok()) {
        if (v->empty() || v->find(' ') != std::string::npos) std::abort();
      }
      // health_status/unhealthy_components: what is accepted is printable and a fixed point.
      if (auto v = ParseUnhealthyComponents(text); v.ok()) {
        for (char c : *v) {
          if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            std::abort();
          }
        }
        auto again = ParseUnhealthyComponents(*v);
        if (!again.ok() || *again != *v) std::abort();
      }
      break;
  }
  return 0;
}
