#include "lib/agent/node_labels.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace neuron::agent {

Labels NodeLabels(const inventory::Inventory& inv) {
  Labels labels;
  int devices = 0;
  std::string family;
  for (const auto& d : inv.devices) {
    if (!d.present) continue;
    ++devices;
    if (family.empty() && d.model) family = topology::FamilyName(d.model->family);
  }
  if (devices == 0) return labels;
  const std::string p = kLabelPrefix;
  labels.emplace_back(p, "true");
  if (!family.empty()) labels.emplace_back(p + "-family", family);
  labels.emplace_back(p + "-device-count", std::to_string(devices));
  // Logical cores (what aws.amazon.com/neuroncore advertises); withheld while LNC is unreadable.
  if (inv.lnc > 0) {
    labels.emplace_back(p + "-core-count", std::to_string(inv.total_cores));
    labels.emplace_back(p + "-lnc", std::to_string(inv.lnc));
  }
  labels.emplace_back(p + "-physical-core-count", std::to_string(inv.total_physical_cores));
  if (!inv.instance_type.empty()) labels.emplace_back(p + "-instance-type", inv.instance_type);
  return labels;
}

std::string FeatureFileContent(const Labels& labels) {
  std::string out = "# Written by neuron-node-agent; rewritten on every inventory change.\n";
  for (const auto& [key, value] : labels) absl::StrAppend(&out, key, "=", value, "\n");
  return out;
}

absl::Status WriteFeatureFile(const std::string& dir, const std::string& name,
                              const Labels& labels) {
  namespace fs = std::filesystem;
  const fs::path target = fs::path(dir) / name;
  std::error_code ec;
  if (labels.empty()) {
    fs::remove(target, ec);
    return ec ? absl::UnavailableError(absl::StrCat("remove ", target.string(), ": ", ec.message()))
              : absl::OkStatus();
  }
  const std::string content = FeatureFileContent(labels);
  {
    std::ifstream current(target);
    if (current && std::string(std::istreambuf_iterator<char>(current), {}) == content) {
      return absl::OkStatus();
    }
  }
  fs::create_directories(dir, ec);
  const fs::path temp = fs::path(dir) / absl::StrCat(".", name, ".tmp");
  {
    std::ofstream out(temp, std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      return absl::UnavailableError(absl::StrCat("write ", temp.string(), " failed"));
    }
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    fs::remove(temp, ec);
    return absl::UnavailableError(
        absl::StrCat("rename ", temp.string(), " -> ", target.string(), ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace neuron::agent
