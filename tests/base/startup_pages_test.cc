// ReleaseStartupPages on this very process: its read-only file pages leave RSS, and the code
// and data they hold still work afterwards (faulted back from the page cache).
#include "lib/base/startup_pages.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

namespace neuron {
namespace {

long RssFileKiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "RssFile:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(4096, '\n');
  }
  return -1;
}

TEST_CASE("start-up pages: read-only file mappings leave RSS, and everything still runs",
          "[base][memory]") {
  const long before = RssFileKiB();
  REQUIRE(before > 0);
  const ReleasedPages released = ReleaseStartupPages();
  if (!released.supported) {  // Linux < 5.4: nothing advised, nothing broken
    CHECK(released.mappings == 0);
    return;
  }
  CHECK(released.mappings > 0);
  const long after = RssFileKiB();
  CAPTURE(before, after);
  // This test binary's own text is mapped by no other process, so its pages go.
  CHECK(after < before);
  // Code and read-only data come back on use.
  std::vector<std::string> words{"page", "out"};
  CHECK(words[0] + words[1] == "pageout");
  CHECK(ReleaseStartupPages().mappings > 0);  // and it can be done again
}

}  // namespace
}  // namespace neuron
