// Helpers shared by the k8s tests: temp dirs, files, an exec-credential plugin script.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace neuron::k8s::testutil {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/k8s-test-XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A shell script printing an ExecCredential whose token is "$2$PLUGIN_SUFFIX-<run number>"; it
// saves KUBERNETES_EXEC_INFO to <dir>/exec_info and counts runs in <dir>/runs.
inline std::string WriteExecPlugin(const std::string& dir, const std::string& expiry) {
  const std::string path = dir + "/plugin.sh";
  WriteFile(path,
            "#!/bin/sh\n"
            "d=$(dirname \"$0\")\n"
            "n=$(( $(cat \"$d/runs\" 2>/dev/null || echo 0) + 1 ))\n"
            "echo $n > \"$d/runs\"\n"
            "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/exec_info\"\n"
            "api=$(printf '%s' \"$KUBERNETES_EXEC_INFO\" | sed "
            "'s/.*\"apiVersion\":\"\\([^\"]*\\)\".*/\\1/')\n"
            "printf "
            "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\",\"status\":{\"token\":\"%s%s-%s\","
            "\"expirationTimestamp\":\"" +
                expiry + "\"}}' \"$api\" \"$2\" \"$PLUGIN_SUFFIX\" \"$n\"\n");
  chmod(path.c_str(), 0755);
  return path;
}

}  // namespace neuron::k8s::testutil
