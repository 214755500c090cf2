#include "tests/testing/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/time/clock.h"

namespace neuron::testing {

Subprocess::Subprocess(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    // The test process may block signals (lib/base/signals.h); the child must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && exit_code_ < 0) Terminate(absl::Seconds(5));
}

std::string Subprocess::Log() const {
  std::ifstream in(log_path_);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Subprocess::WaitForLog(const std::string& needle, absl::Duration timeout) const {
  std::string log;
  const bool found = Eventually(
      [&] {
        log = Log();
        return log.find(needle) != std::string::npos;
      },
      timeout);
  return found ? log : "";
}

bool Subprocess::Running() {
  if (pid_ <= 0 || exit_code_ >= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

int Subprocess::Terminate(absl::Duration grace) {
  if (pid_ <= 0) return -1;
  if (exit_code_ >= 0) return exit_code_;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

std::string BinaryPath(const std::string& name) {
  const char* dir = std::getenv("NEURON_BIN_DIR");
  return std::string(dir != nullptr ? dir : "build/bin") + "/" + name;
}

}  // namespace neuron::testing
