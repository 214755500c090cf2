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

std::string ModesLabelValue(const std::vector<int>& modes) { return absl::StrJoin(modes, "_"); }

}  // namespace neuron::ultraserver
