#include <signal.h>

#include <thread>

#include "absl/time/time.h"
#include "catch2/catch.hpp"
#include "lib/base/backoff.h"
#include "lib/base/env.h"
#include "lib/base/logging.h"
#include "lib/base/status_macros.h"
#include "tests/fakes/fake_clock.h"

namespace neuron {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  NEURON_ASSIGN_OR_RETURN(int half, Half(x));
  NEURON_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

absl::Status CheckEven(int x) {
  NEURON_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST_CASE("status macros propagate the first error", "[base]") {
  CHECK(*Quarter(8) == 2);
  CHECK(Quarter(6).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(CheckEven(4).ok());
  CHECK(CheckEven(3).message() == "odd");
}

TEST_CASE("backoff grows to the cap, stays within jitter, and resets", "[base]") {
  Backoff b({.initial = absl::Milliseconds(100),
             .max = absl::Seconds(1),
             .multiplier = 2,
             .jitter = 0.2});
  absl::Duration expected = absl::Milliseconds(100);
  for (int i = 0; i < 8; ++i) {
    const absl::Duration d = b.Next();
    CHECK(d >= expected * 0.8);
    CHECK(d <= std::min(absl::Seconds(1), expected * 1.2));
    expected = std::min(absl::Seconds(1), expected * 2);
  }
  CHECK(b.attempts() == 8);
  b.Reset();
  CHECK(b.attempts() == 0);
  CHECK(b.Next() <= absl::Milliseconds(120));
}

TEST_CASE("backoff jitter is reproducible for a seed and varies between seeds", "[base]") {
  const BackoffPolicy p{.initial = absl::Seconds(1), .max = absl::Seconds(10), .jitter = 0.5};
  Backoff a(p, 7), b(p, 7), c(p, 8);
  bool differs = false;
  for (int i = 0; i < 16; ++i) {
    const absl::Duration da = a.Next();
    CHECK(da == b.Next());
    differs = differs || da != c.Next();
  }
  CHECK(differs);
}

TEST_CASE("EnvOr prefers a non-empty environment value", "[base]") {
  setenv("NEURON_TEST_ENV_OR", "from-env", 1);
  CHECK(EnvOr("NEURON_TEST_ENV_OR", "fallback") == "from-env");
  setenv("NEURON_TEST_ENV_OR", "", 1);
  CHECK(EnvOr("NEURON_TEST_ENV_OR", "fallback") == "fallback");
  unsetenv("NEURON_TEST_ENV_OR");
  CHECK(EnvOr("NEURON_TEST_ENV_OR", "fallback") == "fallback");
}

TEST_CASE("InitLogging rejects unknown levels", "[base]") {
  CHECK(InitLogging("test", "debug").ok());
  CHECK(InitLogging("test", "off").ok());
  const absl::Status bad = InitLogging("test", "loud");
  CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.message()).find("loud") != std::string::npos);
  CHECK(InitLogging("test", "info", /*json=*/true).ok());
}

TEST_CASE("FakeClock wakes sleepers only when advanced past their deadline", "[base]") {
  fakes::FakeClock clock;
  const absl::Time start = clock.Now();
  bool woke = false;
  std::thread sleeper([&] {
    clock.SleepFor(absl::Seconds(10));
    woke = true;
  });
  while (clock.sleepers() == 0) std::this_thread::yield();
  clock.Advance(absl::Seconds(5));
  CHECK(clock.sleepers() == 1);
  clock.Advance(absl::Seconds(5));
  sleeper.join();
  CHECK(woke);
  CHECK(clock.Now() - start == absl::Seconds(10));
}

}  // namespace
}  // namespace neuron
