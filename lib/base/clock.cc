#include "lib/base/clock.h"

#include "absl/time/clock.h"

namespace neuron {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* clock = new RealClock();  // never destroyed: usable during static teardown
  return *clock;
}

}  // namespace neuron
