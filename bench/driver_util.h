// File: bench/driver_util.h
// What the load drivers share: "--name=N" flags and a kubeconfig for a plain-HTTP fake
// kube-apiserver on loopback.
#pragma once

#include <fstream>
#include <string>

#include "absl/strings/numbers.h"

namespace neuron::bench {

// The value of "--<name>=N" among argv, or `fallback` when absent or not a number.
inline int IntFlag(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    int v = 0;
    if (arg.rfind("--" + name + "=", 0) == 0 && absl::SimpleAtoi(arg.substr(name.size() + 3), &v)) {
      return v;
    }
  }
  return fallback;
}

// Writes <dir>/kubeconfig pointing at http://127.0.0.1:<port> with a token user; its path.
inline std::string WriteKubeconfig(const std::string& dir, int port) {
  const std::string path = dir + "/kubeconfig";
  std::ofstream f(path);
  f << "apiVersion: v1\nkind: Config\ncurrent-context: bench\n"
    << "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:" << port << "\n"
    << "users:\n- name: ext\n  user:\n    token: bench\n"
    << "contexts:\n- name: bench\n  context:\n    cluster: fake\n    user: ext\n";
  return path;
}

}  // namespace neuron::bench
