// File: tests/base/fatal_signals_test.cc
// Each case forks a child that installs the handlers and then dies the way a daemon might; the
// parent reads the child's stderr and its wait status: one line that says why, and the same
// death (signal, core) the default action gives.
#include "lib/base/fatal_signals.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "catch2/catch.hpp"

namespace neuron {
namespace {

struct Death {
  int status = 0;
  std::string stderr_text;
};

Death RunChild(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    InstallFatalSignalLogging("fatal-test");
    body();
    _exit(0);
  }
  close(fds[1]);
  Death d;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) d.stderr_text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  REQUIRE(waitpid(pid, &d.status, 0) == pid);
  return d;
}

TEST_CASE("an unexpected signal leaves a line and still kills as its default would", "[base]") {
  const Death d = RunChild([] { raise(SIGHUP); });
  CHECK(d.stderr_text.find("fatal-test: terminated by SIGHUP") != std::string::npos);
  REQUIRE(WIFSIGNALED(d.status));
  CHECK(WTERMSIG(d.status) == SIGHUP);
}

TEST_CASE("SIGPIPE is ignored: a write to a closed peer fails with EPIPE", "[base]") {
  const Death d = RunChild([] {
    int p[2];
    if (pipe(p) != 0) _exit(10);
    close(p[0]);
    const ssize_t w = write(p[1], "x", 1);
    _exit(w == -1 && errno == EPIPE ? 0 : 11);
  });
  REQUIRE(WIFEXITED(d.status));
  CHECK(WEXITSTATUS(d.status) == 0);
}

TEST_CASE("an uncaught exception names itself before the abort", "[base]") {
  // Thrown on a thread of its own, as a daemon's worker would: Catch2's handler around the
  // test body must not be the one that catches it.
  const Death d = RunChild(
      [] { std::thread([] { throw std::runtime_error("checkpoint unreadable"); }).join(); });
  CHECK(d.stderr_text.find("uncaught exception: checkpoint unreadable") != std::string::npos);
  REQUIRE(WIFSIGNALED(d.status));
  CHECK(WTERMSIG(d.status) == SIGABRT);
}

TEST_CASE("exit() outside LoggedExit is reported once watched", "[base]") {
  const Death d = RunChild([] {
    WatchUnexpectedExit();
    std::exit(3);
  });
  CHECK(d.stderr_text.find("exit() called outside main's return") != std::string::npos);
  REQUIRE(WIFEXITED(d.status));
  CHECK(WEXITSTATUS(d.status) == 3);
  const Death clean = RunChild([] {
    WatchUnexpectedExit();
    std::exit(LoggedExit(4));
  });
  CHECK(clean.stderr_text.find("exit() called outside") == std::string::npos);
  CHECK(WEXITSTATUS(clean.status) == 4);
}

}  // namespace
}  // namespace neuron
