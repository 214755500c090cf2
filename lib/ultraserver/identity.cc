// File: lib/ultraserver/identity.cc
#include "lib/ultraserver/identity.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neuron::ultraserver {
namespace {

// sysfs_emit's one trailing newline, and stray blanks around it.
absl::string_view Trim(absl::string_view text) { return absl::StripAsciiWhitespace(text); }

bool Busy(absl::string_view text) { return Trim(text) == "busy"; }

absl::Status BusyError(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": the driver's UltraServer election is busy"));
}

bool LabelSafe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
}

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

std::string ServerIdFile(int set_size) { return absl::StrCat("server_id_", set_size); }
std::string NodeIdFile(int set_size) { return absl::StrCat("node_id_", set_size); }

bool Identity::Supports(Mode m) const {
  return std::find(modes.begin(), modes.end(), static_cast<int>(m)) != modes.end();
}

Mode Identity::ModeForSize(int size) const {
  switch (size) {
    case 4:
      return Supports(Mode::kX4) ? Mode::kX4 : Mode::kUnset;
    case 2:
      if (Supports(Mode::kX2H)) return Mode::kX2H;
      return Supports(Mode::kX2V) ? Mode::kX2V : Mode::kUnset;
    case 1:
      return Supports(Mode::kX1) ? Mode::kX1 : Mode::kUnset;
    default:
      return Mode::kUnset;
  }
}

std::optional<SetMember> Identity::MemberOf(int size) const {
  const Mode mode = ModeForSize(size);
  if (mode == Mode::kUnset) return std::nullopt;
  if (size == 1) return SetMember{1, kNoServerId, -1, mode};
  std::string server = trn3 ? reservation_id : (size == 4 ? server_id_4 : server_id_2);
  const int node = trn3 ? node_id : (size == 4 ? node_id_4 : node_id_2);
  if (server.empty() || node < 0 || node >= size) return std::nullopt;
  return SetMember{size, std::move(server), node, mode};
}

std::vector<int> Identity::SetSizes() const {
  std::vector<int> out;
  for (int size : kSetSizes) {
    if (MemberOf(size)) out.push_back(size);
  }
  return out;
}

absl::StatusOr<std::vector<int>> ParseModes(absl::string_view text) {
  if (Busy(text)) return BusyError("ultraserver_mode");
  const absl::string_view body = Trim(text);
  std::vector<int> modes;
  if (body.empty()) return modes;
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    part = Trim(part);
    int v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 1 || v > 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("ultraserver mode list \"", absl::CHexEscape(body.substr(0, 64)),
                       "\": expected modes 1..4 separated by commas"));
    }
    modes.push_back(v);
  }
  std::sort(modes.begin(), modes.end());
  modes.erase(std::unique(modes.begin(), modes.end()), modes.end());
  return modes;
}

absl::StatusOr<std::string> ParseServerId(absl::string_view text) {
  if (Busy(text)) return BusyError("server id");
  const absl::string_view body = Trim(text);
  if (body.empty() || body.size() > 63 || !std::all_of(body.begin(), body.end(), LabelSafe)) {
    return absl::InvalidArgumentError(
        absl::StrCat("server id \"", absl::CHexEscape(body.substr(0, 64)),
                     "\": expected 1..63 characters of [0-9A-Za-z._-]"));
  }
  if (std::all_of(body.begin(), body.end(), [](char c) { return c == '0'; })) return "";
  return std::string(body);
}

absl::StatusOr<int> ParseNodeId(absl::string_view text) {
  if (Busy(text)) return BusyError("node id");
  const absl::string_view body = Trim(text);
  int v = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (body.empty() || ec != std::errc() || end != body.data() + body.size() || v < -1 || v > 63) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node id \"", absl::CHexEscape(body.substr(0, 64)), "\": expected a decimal -1..63"));
  }
  return v;
}

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

std::string ModesLabelValue(const std::vector<int>& modes) { return absl::StrJoin(modes, "_"); }

}  // namespace neuron::ultraserver
