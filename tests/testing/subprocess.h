// File: tests/testing/subprocess.h
// Runs one of our real binaries as a child process for end-to-end tests: stdout+stderr go to a
// log file the test can wait on; the destructor sends SIGTERM and reaps the child.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace neuron::testing {

class Subprocess {
 public:
  // `argv[0]` is a path. Output goes to `log_path`.
  Subprocess(std::vector<std::string> argv, std::string log_path);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Everything the child wrote so far.
  std::string Log() const;
  // Polls the log until it contains `needle`; returns the log text or "" on timeout.
  std::string WaitForLog(const std::string& needle, absl::Duration timeout) const;
  // SIGTERM, then waits up to `grace` (SIGKILL after). Returns the exit code, or 128+signal.
  int Terminate(absl::Duration grace = absl::Seconds(10));
  // True while the child has not exited.
  bool Running();

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  int exit_code_ = -1;
};

// The path of a binary built into <build>/bin (NEURON_BIN_DIR is set by CTest).
std::string BinaryPath(const std::string& name);

// Polls `condition` every 20 ms until it is true or `timeout` passes.
template <typename F>
bool Eventually(F condition, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return condition();
}

}  // namespace neuron::testing
