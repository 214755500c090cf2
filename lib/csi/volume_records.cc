// File: lib/csi/volume_records.cc
#include "lib/csi/volume_records.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/dra/atomic_file.h"

namespace neuron::csi {

namespace fs = std::filesystem;

namespace {

absl::Status FsError(const std::string& what, const fs::path& p, const std::error_code& ec) {
  return absl::InternalError(absl::StrCat(what, " ", p.string(), ": ", ec.message()));
}

}  // namespace

VolumeRecords::VolumeRecords(std::string state_dir)
    : volumes_dir_((fs::path(std::move(state_dir)) / "volumes").string()) {}

absl::Status VolumeRecords::Init() const {
  std::error_code ec;
  fs::create_directories(volumes_dir_, ec);
  if (ec) return FsError("creating state directory", volumes_dir_, ec);
  return absl::OkStatus();
}

std::string VolumeRecords::RecordPath(const std::string& volume_id) const {
  return (fs::path(volumes_dir_) / (volume_id + ".json")).string();
}

std::string VolumeRecords::VolumeDir(const std::string& volume_id) const {
  return (fs::path(volumes_dir_) / volume_id).string();
}

absl::Status VolumeRecords::Write(const VolumeRecord& r) const {
  nlohmann::json j = {{"volume_id", r.volume_id},
                      {"target_path", r.target_path},
                      {"lower_dir", r.lower_dir},
                      {"pod", r.pod},
                      {"mounter", r.mounter}};
  return dra::WriteFileAtomically(RecordPath(r.volume_id), j.dump() + "\n");
}

absl::StatusOr<VolumeRecord> VolumeRecords::Read(const std::string& volume_id) const {
  const std::string path = RecordPath(volume_id);
  absl::StatusOr<std::string> text = dra::ReadWholeFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  auto str = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!j.is_object() || str("volume_id") != volume_id || str("target_path").empty()) {
    return absl::DataLossError(absl::StrCat("volume record ", path, " is corrupt"));
  }
  return VolumeRecord{volume_id, str("target_path"), str("lower_dir"), str("pod"), str("mounter")};
}

absl::Status VolumeRecords::Remove(const std::string& volume_id) const {
  return dra::RemoveFileDurably(RecordPath(volume_id));
}

std::vector<VolumeRecord> VolumeRecords::List() const {
  std::vector<VolumeRecord> out;
  std::error_code ec;
  for (fs::directory_iterator it(volumes_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!absl::EndsWith(name, ".json") || absl::StartsWith(name, ".")) continue;
    absl::StatusOr<VolumeRecord> r = Read(name.substr(0, name.size() - 5));
    if (r.ok()) {
      out.push_back(*std::move(r));
    } else {
      spdlog::warn("csi skipping volume record path={} error=\"{}\"", it->path().string(),
                   std::string(r.status().message()));
    }
  }
  return out;
}

absl::Status VolumeRecords::CreateVolumeDirs(const std::string& volume_id) const {
  if (absl::Status s = RemoveVolumeDirs(volume_id); !s.ok()) return s;
  std::error_code ec;
  for (const std::string& d : {UpperDir(volume_id), WorkDir(volume_id)}) {
    fs::create_directories(d, ec);
    if (ec) return FsError("creating", d, ec);
  }
  return absl::OkStatus();
}

absl::Status VolumeRecords::RemoveVolumeDirs(const std::string& volume_id) const {
  std::error_code ec;
  fs::remove_all(VolumeDir(volume_id), ec);
  if (ec) return FsError("removing", VolumeDir(volume_id), ec);
  return absl::OkStatus();
}

}  // namespace neuron::csi
