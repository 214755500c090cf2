// File: lib/base/fatal_signals.h
// No signal and no library's exit() ends one of our processes without a line saying so (a
// DaemonSet's restart counter alone tells an admin nothing):
// - SIGPIPE is ignored: a peer that closed its socket (the kubelet, a scrape) makes the write
//   fail with EPIPE instead of silently killing the process;
// - any other signal whose default action ends the process (SIGHUP, SIGQUIT, SIGUSR1, SIGSEGV,
//   SIGABRT, ...; SIGTERM/SIGINT are ShutdownOnSignals()' graceful path) writes one line to
//   stderr, then the default action is restored and the signal raised again, so the exit status
//   and any core dump are what they would have been;
// - std::terminate (an uncaught exception) writes the exception's message first;
// - once WatchUnexpectedExit() was called, exit() anywhere but through LoggedExit (a library
//   giving up) writes a line.
// Sanitizer builds keep the sanitizer's own handlers for the crash signals.
#pragma once

namespace neuron {

// Call first thing in main(). `program` must outlive the process (a string literal).
void InstallFatalSignalLogging(const char* program);

// From here on, every way out of main() must be `return LoggedExit(code)`.
void WatchUnexpectedExit();

// main()'s way out: logs "exiting code=N" (error level when N != 0) and marks the exit as ours,
// so the exit() watcher stays quiet. Returns `code`.
int LoggedExit(int code);

}  // namespace neuron
