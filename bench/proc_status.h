// File: bench/proc_status.h
// One field of /proc/<pid>/status in KiB (VmRSS, VmHWM, RssAnon, RssFile, ...), for the load
// drivers that report a child process's memory; -1 when the field or the process is gone.
#pragma once

#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace neuron::bench {

inline long ProcStatusKiB(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  }
  return -1;
}

}  // namespace neuron::bench
