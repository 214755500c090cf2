// File: lib/sysfs/parsers.h
// Pure parsers for the values the Neuron driver and the PCI core print in sysfs
// (../shared/NEURON.md §5). Each returns InvalidArgument with a message naming what was wrong
// (empty, non-numeric, negative, overflow, truncated, trailing garbage); none of them throws.
//
//   ParseU64("42\n")                      -> 42      (counters: decimal, optional one '\n')
//   ParseCoreCount("2")                   -> 2       (printed without a newline)
//   ParseConnectedDevices("1, 3, 12\n")   -> {1,3,12}; "" or "\n" -> {}
//   ParsePowerUtilization("POWER_STATUS_VALID,1700000000,10.50,90.00,42.25\n") -> {.avg=42.25}
//   ParseHexU32("0x1d0f\n")               -> 0x1d0f  (PCI vendor/device/class files)
//   ParseNumaNode("-1\n")                 -> -1
//   ParseToken("NCv2\n")                  -> "NCv2"  (arch strings: trimmed, printable, one word)
//   ParseLogicalNcConfig("NEURON_LOGICAL_NC_CONFIG=1") -> 1  (/opt/aws/neuron/logical_nc_config)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace neuron::sysfs {

// Decimal unsigned 64-bit counter; at most one trailing "\n" (sysfs_emit style).
absl::StatusOr<uint64_t> ParseU64(absl::string_view text);

// The driver's core_count: a small positive decimal (1..1024), newline optional.
absl::StatusOr<int> ParseCoreCount(absl::string_view text);

// connected_devices: device indices separated by ", " (a bare "," is tolerated), ending in an
// optional newline; empty means "no links". Indices must be 0..1023 and unique.
absl::StatusOr<std::vector<int>> ParseConnectedDevices(absl::string_view text);

struct PowerUtilization {
  // The driver prints its enum name (neuron_power.c npower_format_stats): POWER_STATUS_VALID,
  // POWER_STATUS_NO_DATA or POWER_STATUS_INVALID. min/max/avg mean something only when valid.
  std::string status;
  bool valid = false;      // status == "POWER_STATUS_VALID" (or a bare "0")
  uint64_t timestamp = 0;  // seconds since the epoch of the sample
  double min = 0;          // percent, 0..100
  double max = 0;
  double avg = 0;
};
// stats/power/utilization: "status,timestamp,min,max,avg" (percent), optional newline.
absl::StatusOr<PowerUtilization> ParsePowerUtilization(absl::string_view text);

// "0x1d0f" style hexadecimal (vendor, device, class); "0x" prefix required, newline optional.
absl::StatusOr<uint32_t> ParseHexU32(absl::string_view text);

// numa_node: decimal, -1 means "no NUMA affinity". Range -1..4095.
absl::StatusOr<int> ParseNumaNode(absl::string_view text);

// A single printable word (arch_type, instance_type, device_name, serial_number), trimmed of
// surrounding whitespace. Empty or containing control characters/spaces -> InvalidArgument.
absl::StatusOr<std::string> ParseToken(absl::string_view text);
// health_status/unhealthy_components (driver 2.30.2). Its format is not in any source we can
// read, so it is taken as free text: "" for nothing listed (empty, "0", "none"), else the
// printable words joined by ", " (lines, commas and spaces all separate). InvalidArgument for
// control bytes, over 4096 bytes, over 32 words or a word over 64 bytes, so a garbled node is an
// error, not a reason; an accepted value re-parses to itself.
absl::StatusOr<std::string> ParseUnhealthyComponents(absl::string_view text);

// An LNC value as NEURON_LOGICAL_NC_CONFIG holds it: a decimal 1..8 with optional surrounding
// whitespace. Range checks against a chip (1 or 2) are the caller's: this only rejects garbage.
absl::StatusOr<int> ParseLncValue(absl::string_view text);

// The host file /opt/aws/neuron/logical_nc_config. The EKS docs write it from node user data as
// `NEURON_LOGICAL_NC_CONFIG=1` (appended, possibly without a newline: deploy/eks/prerequisites.rst
// in aws-neuron-sdk), so: lines of `NEURON_LOGICAL_NC_CONFIG=<n>` (optionally `export `-prefixed)
// or a bare `<n>`; blank lines and `#` comments ignored; the last assignment wins, as when the
// file is sourced. No assignment, or any other line -> InvalidArgument.
absl::StatusOr<int> ParseLogicalNcConfig(absl::string_view text);

}  // namespace neuron::sysfs
