// File: lib/ultraserver/read_identity.cc
#include "lib/ultraserver/read_identity.h"

#include "absl/strings/str_cat.h"

namespace neuron::ultraserver {
namespace {

// A file under the class directory; nullopt when absent.
absl::StatusOr<std::optional<std::string>> ReadOptional(const sysfs::Fs& fs,
                                                        const std::string& name) {
  const std::string path = absl::StrCat(kClassDir, "/", name);
  auto text = fs.ReadFile(path);
  if (absl::IsNotFound(text.status())) return std::optional<std::string>();
  if (!text.ok()) return text.status();
  return std::optional<std::string>(*std::move(text));
}

// Prefixes an error with the file it came from.
absl::Status InFile(const std::string& name, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(kClassDir, "/", name, ": ", s.message()));
}

// Reads one id pair (server, node) for a set size; both absent -> {"", -1}.
absl::Status ReadPair(const sysfs::Fs& fs, const std::string& server_file,
                      const std::string& node_file, std::string& server, int& node) {
  auto s = ReadOptional(fs, server_file);
  if (!s.ok()) return InFile(server_file, s.status());
  auto n = ReadOptional(fs, node_file);
  if (!n.ok()) return InFile(node_file, n.status());
  if (s->has_value()) {
    auto parsed = ParseServerId(**s);
    if (!parsed.ok()) return InFile(server_file, parsed.status());
    server = *parsed;
  }
  if (n->has_value()) {
    auto parsed = ParseNodeId(**n);
    if (!parsed.ok()) return InFile(node_file, parsed.status());
    node = *parsed;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<Identity>> ReadIdentity(const sysfs::Fs& fs) {
  auto modes_text = ReadOptional(fs, kModesFile);
  if (!modes_text.ok()) return InFile(kModesFile, modes_text.status());
  if (!modes_text->has_value()) return std::optional<Identity>();  // driver before UltraServers
  auto modes = ParseModes(**modes_text);
  if (!modes.ok()) return InFile(kModesFile, modes.status());
  if (modes->empty()) return std::optional<Identity>();  // not part of an UltraServer
  Identity id;
  id.modes = *std::move(modes);
  id.trn3 = fs.Exists(absl::StrCat(kClassDir, "/", kReservationIdFile));
  absl::Status s =
      id.trn3 ? ReadPair(fs, kReservationIdFile, kNodeIdFile, id.reservation_id, id.node_id)
              : ReadPair(fs, ServerIdFile(2), NodeIdFile(2), id.server_id_2, id.node_id_2);
  if (s.ok() && !id.trn3) {
    s = ReadPair(fs, ServerIdFile(4), NodeIdFile(4), id.server_id_4, id.node_id_4);
  }
  if (!s.ok()) return s;
  return std::optional<Identity>(std::move(id));
}

}  // namespace neuron::ultraserver
