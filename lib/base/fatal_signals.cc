// File: lib/base/fatal_signals.cc
#include "lib/base/fatal_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "spdlog/spdlog.h"

namespace neuron {
namespace {

const char* g_program = "neuron";
std::atomic<bool> g_clean_exit{false};

struct Named {
  int sig;
  const char* name;
};
// Default action "terminate" or "core"; SIGTERM/SIGINT are the graceful path, SIGKILL and
// SIGSTOP cannot be caught.
constexpr Named kQuiet[] = {
    {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"},     {SIGUSR1, "SIGUSR1"},     {SIGUSR2, "SIGUSR2"},
    {SIGALRM, "SIGALRM"}, {SIGVTALRM, "SIGVTALRM"}, {SIGXCPU, "SIGXCPU"},     {SIGXFSZ, "SIGXFSZ"},
    {SIGSYS, "SIGSYS"},   {SIGTRAP, "SIGTRAP"},     {SIGSTKFLT, "SIGSTKFLT"}, {SIGPWR, "SIGPWR"}};
constexpr Named kCrash[] = {{SIGSEGV, "SIGSEGV"},
                            {SIGBUS, "SIGBUS"},
                            {SIGFPE, "SIGFPE"},
                            {SIGILL, "SIGILL"},
                            {SIGABRT, "SIGABRT"}};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Async-signal-safe: write(2) only.
void Put(const char* s) {
  const size_t n = std::strlen(s);
  ssize_t ignored = write(STDERR_FILENO, s, n);
  (void)ignored;
}

const char* NameOf(int sig) {
  for (const Named& n : kQuiet) {
    if (n.sig == sig) return n.name;
  }
  for (const Named& n : kCrash) {
    if (n.sig == sig) return n.name;
  }
  return "signal";
}

void OnFatalSignal(int sig) {
  Put(g_program);
  Put(": terminated by ");
  Put(NameOf(sig));
  Put(" (default action restored and raised again)\n");
  signal(sig, SIG_DFL);
  raise(sig);
}

void OnTerminate() {
  Put(g_program);
  Put(": std::terminate: ");
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      Put("uncaught exception: ");
      Put(ex.what());
    } catch (...) {
      Put("uncaught exception of unknown type");
    }
  } else {
    Put("called without an exception");
  }
  Put("\n");
  std::abort();
}

void OnExit() {
  if (g_clean_exit.load()) return;
  Put(g_program);
  Put(": exit() called outside main's return (a library gave up?)\n");
}

void Install(int sig) {
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sigaction(sig, &sa, nullptr);
}

}  // namespace

void InstallFatalSignalLogging(const char* program) {
  g_program = program;
  signal(SIGPIPE, SIG_IGN);
  for (const Named& n : kQuiet) Install(n.sig);
  if (!kSanitized) {
    for (const Named& n : kCrash) Install(n.sig);
  }
  std::set_terminate(OnTerminate);
}

void WatchUnexpectedExit() { std::atexit(OnExit); }

int LoggedExit(int code) {
  if (code == 0) {
    spdlog::info("exiting code=0");
  } else {
    spdlog::error("exiting code={}", code);
  }
  spdlog::default_logger()->flush();
  g_clean_exit = true;
  return code;
}

}  // namespace neuron
