// File: lib/ultraserver/emulation.h
// One emulated node of a Trn2 UltraServer (4 trn2u nodes), from the --emulate-ultraserver flag:
//   "<name>:<node>[:<modes>]"   e.g. "us-a:2", "us-a:0:1,2,3,4"
// <name> names the UltraServer (1..32 characters of [0-9A-Za-z._-]); <node> is node_id_4, 0..3;
// <modes> the runtime modes the node supports (default "1,2,4", as AWS's example nodes show).
// Nodes 0,1 and 2,3 are the pairs (node_id_2 = node % 2), as AWS's labelled example shows.
// Server ids are 16 hex digits hashed from the name (and pair), like the driver's "%016llx", so
// four agents given the same name agree without talking to each other.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::ultraserver {

struct EmulatedNode {
  std::string name;
  int node = 0;
  std::vector<int> modes = {1, 2, 4};
};

absl::StatusOr<EmulatedNode> ParseEmulatedNode(const std::string& flag);

// The class-directory files the driver would show on that node (file name -> contents).
std::map<std::string, std::string> EmulatedClassAttributes(const EmulatedNode& node);

}  // namespace neuron::ultraserver
