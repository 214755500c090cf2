#include "tests/testing/promtool.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace neuron::testing {

absl::Status PromtoolCheck(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    return absl::NotFoundError("promtool is not installed");
  }
  char dir_template[] = "/tmp/promtool-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string in = absl::StrCat(dir, "/metrics.txt");
  const std::string out = absl::StrCat(dir, "/out.txt");
  std::ofstream(in) << text;
  const std::string cmd = absl::StrCat("promtool check metrics < ", in, " > ", out, " 2>&1");
  const int rc = std::system(cmd.c_str());
  std::ifstream result(out);
  std::string output((std::istreambuf_iterator<char>(result)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat("promtool check metrics: ", output));
  }
  return absl::OkStatus();
}

}  // namespace neuron::testing
