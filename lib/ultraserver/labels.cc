// File: lib/ultraserver/labels.cc
#include "lib/ultraserver/labels.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace neuron::ultraserver {
namespace {

const std::string* Find(const std::map<std::string, std::string>& labels, const std::string& k) {
  auto it = labels.find(k);
  return it == labels.end() ? nullptr : &it->second;
}

// The id labels of one set size into (server, node); left as is when missing or malformed.
void ReadSetLabels(const std::map<std::string, std::string>& labels, int size, std::string& server,
                   int& node) {
  const std::string* s = Find(labels, ServerIdLabel(size));
  const std::string* n = Find(labels, NodeIdLabel(size));
  if (s == nullptr || n == nullptr) return;
  auto sid = ParseServerId(*s);
  auto nid = ParseNodeId(*n);
  if (!sid.ok() || !nid.ok() || sid->empty()) return;
  server = *sid;
  node = *nid;
}

}  // namespace

std::string ServerIdLabel(int set_size) {
  return absl::StrCat(kLabelPrefix, "server-id-", set_size);
}
std::string NodeIdLabel(int set_size) { return absl::StrCat(kLabelPrefix, "node-id-", set_size); }

const std::vector<std::string>& AllLabelKeys() {
  static const auto* keys = new std::vector<std::string>{
      kModeLabel, ServerIdLabel(2), NodeIdLabel(2), ServerIdLabel(4), NodeIdLabel(4)};
  return *keys;
}

LabelList IdentityLabels(const Identity& id) {
  LabelList out;
  if (id.modes.empty()) return out;
  out.emplace_back(kModeLabel, ModesLabelValue(id.modes));
  for (int size : {2, 4}) {
    auto m = id.MemberOf(size);
    if (!m) continue;
    out.emplace_back(ServerIdLabel(size), m->server_id);
    out.emplace_back(NodeIdLabel(size), absl::StrCat(m->node_id));
  }
  return out;
}

std::optional<Identity> IdentityFromLabels(const std::map<std::string, std::string>& labels) {
  const std::string* mode = Find(labels, kModeLabel);
  if (mode == nullptr) return std::nullopt;
  auto modes = ParseModes(absl::StrReplaceAll(*mode, {{"_", ","}}));
  if (!modes.ok() || modes->empty()) return std::nullopt;
  Identity id;
  id.modes = *std::move(modes);
  ReadSetLabels(labels, 2, id.server_id_2, id.node_id_2);
  ReadSetLabels(labels, 4, id.server_id_4, id.node_id_4);
  return id;
}

}  // namespace neuron::ultraserver
