// File: lib/ultraserver/identity.h
// Who a node is inside an UltraServer (../shared/NEURON.md §7), as the Neuron driver publishes it
// in its class directory, sys/class/neuron_device/:
//   trn2u: node_id_2, node_id_4 ("%d\n", -1 = not in such a set), server_id_2, server_id_4
//          ("%016llx\n", all zeros = none), ultraserver_mode (the runtime modes the node
//          supports, "1,2,4\n"; "\n" on nodes outside an UltraServer);
//   trn3:  node_id, reservation_id, ultraserver_mode.
// While the driver's election runs, every one of them prints "busy": that is Unavailable (retry),
// never a guess. Drivers before UltraServers have none of the files: not an UltraServer node.
//
// The driver decides the pairing behind server_id_2/node_id_2: X2H when the node supports it,
// else X2V (neuron_dhal npe_class_{node,server}_id_show_data), so a set of 2 runs in that mode.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace neuron::ultraserver {

// NEURON_RT_ULTRASERVER_MODE values (neuron_driver_shared.h enum neuron_ultraserver_mode).
enum class Mode : int { kUnset = 0, kX4 = 1, kX2H = 2, kX2V = 3, kX1 = 4 };

// The set sizes a job may ask for.
inline constexpr int kSetSizes[] = {1, 2, 4};

// The class directory and its UltraServer attributes (relative to the host root).
inline constexpr char kClassDir[] = "sys/class/neuron_device";
inline constexpr char kModesFile[] = "ultraserver_mode";
inline constexpr char kReservationIdFile[] = "reservation_id";  // trn3
inline constexpr char kNodeIdFile[] = "node_id";                // trn3
// "server_id_4", "node_id_2"
std::string ServerIdFile(int set_size);
std::string NodeIdFile(int set_size);

// A server id the driver prints for "none".
inline constexpr char kNoServerId[] = "0000000000000000";

// One node's place in a set of `size` nodes.
struct SetMember {
  int size = 0;
  std::string server_id;  // equal on every node of the set
  int node_id = -1;       // 0..size-1, distinct within the set; the rank inside it
  Mode mode = Mode::kUnset;
};

struct Identity {
  std::vector<int> modes;  // supported runtime modes (Mode values), ascending, unique
  // trn2u: per set size. trn3: reservation_id/node_id, the same for every size.
  std::string server_id_2, server_id_4;
  int node_id_2 = -1, node_id_4 = -1;
  bool trn3 = false;  // read from reservation_id/node_id
  std::string reservation_id;
  int node_id = -1;

  bool Supports(Mode m) const;
  // The runtime mode of a set of `size` nodes on this node: 4 -> X4, 2 -> X2H if supported else
  // X2V, 1 -> X1. kUnset when the node supports none of them.
  Mode ModeForSize(int size) const;
  // This node's place in a set of `size`; nullopt when it supports no such set or the driver
  // gave it no id for it.
  std::optional<SetMember> MemberOf(int size) const;
  // The sizes MemberOf answers, ascending.
  std::vector<int> SetSizes() const;
  bool operator==(const Identity&) const = default;
};

// ultraserver_mode: decimal modes 1..4 separated by commas (spaces tolerated), optional "\n".
// "" or "\n" -> {} (not an UltraServer node). "busy" -> Unavailable. Anything else ->
// InvalidArgument.
absl::StatusOr<std::vector<int>> ParseModes(absl::string_view text);
// server_id_N / reservation_id: a token of [0-9A-Za-z._-], 1..63 bytes (a label value), optional
// "\n"; all zeros -> "" (none). "busy" -> Unavailable.
absl::StatusOr<std::string> ParseServerId(absl::string_view text);
// node_id_N / node_id: decimal -1..63, optional "\n". "busy" -> Unavailable.
absl::StatusOr<int> ParseNodeId(absl::string_view text);

// "1,2,4" -> "1_2_4" (a label value cannot hold ','), as AWS's device plugin labels nodes.
std::string ModesLabelValue(const std::vector<int>& modes);

}  // namespace neuron::ultraserver
