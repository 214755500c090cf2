// File: lib/csi/detect_mounter.cc
// Chooses the overlay mounter when this process can really make an overlay in the state
// directory (privileges, kernel support, a filesystem overlay accepts as upperdir), else copy.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/csi/mounter.h"

namespace neuron::csi {
namespace {

namespace fs = std::filesystem;

std::string ReadFirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// Mounts a tiny overlay and checks both guarantees the driver relies on.
absl::Status ProbeOverlay(Mounter& overlay, const fs::path& dir) {
  std::error_code ec;
  for (const char* sub : {"lower", "upper", "work", "merged"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("creating ", (dir / sub).string(), ": ", ec.message()));
    }
  }
  std::ofstream(dir / "lower" / "probe") << "lower\n";
  absl::Status s = overlay.Mount((dir / "lower").string(), (dir / "upper").string(),
                                 (dir / "work").string(), (dir / "merged").string());
  if (!s.ok()) return s;
  std::string seen = ReadFirstLine(dir / "merged" / "probe");
  std::ofstream(dir / "merged" / "probe") << "upper\n";
  std::string lower_after = ReadFirstLine(dir / "lower" / "probe");
  absl::Status un = overlay.Unmount((dir / "merged").string());
  if (seen != "lower") {
    return absl::InternalError("the lower file is not visible through the overlay");
  }
  if (lower_after != "lower") {
    return absl::InternalError("a write through the overlay changed the lower file");
  }
  return un;
}

}  // namespace

std::unique_ptr<Mounter> DetectMounter(const std::string& state_dir) {
  std::unique_ptr<Mounter> overlay = NewOverlayMounter();
  const fs::path dir = fs::path(state_dir) / ".mount-probe";
  std::error_code ec;
  overlay->Unmount((dir / "merged").string()).IgnoreError();  // left by a crash mid-probe
  fs::remove_all(dir, ec);
  absl::Status probe = ProbeOverlay(*overlay, dir);
  fs::remove_all(dir, ec);
  if (probe.ok()) {
    spdlog::info("csi mounter=overlay state_dir={}", state_dir);
    return overlay;
  }
  spdlog::warn(
      "csi mounter=copy state_dir={} reason=\"overlay probe failed: {}\" (each pod gets its own "
      "copy of the cache)",
      state_dir, std::string(probe.message()));
  return NewCopyMounter();
}

}  // namespace neuron::csi
