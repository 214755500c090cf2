// File: lib/base/startup_pages.cc
#include "lib/base/startup_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21  // Linux 5.4; older headers lack the name
#endif

namespace neuron {

ReleasedPages ReleaseStartupPages() {
  ReleasedPages out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path"
    std::istringstream fields(line);
    std::string range;
    std::string perms;
    std::string offset;
    std::string dev;
    std::string inode;
    std::string path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    if (path.empty() || path.front() != '/' || perms.size() < 4 || perms[1] == 'w') continue;
    uintptr_t start = 0;
    uintptr_t end = 0;
    const size_t dash = range.find('-');
    if (dash == std::string::npos ||
        std::from_chars(range.data(), range.data() + dash, start, 16).ec != std::errc() ||
        std::from_chars(range.data() + dash + 1, range.data() + range.size(), end, 16).ec !=
            std::errc() ||
        end <= start) {
      continue;
    }
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address read from /proc/self/maps
    if (madvise(reinterpret_cast<void*>(start), end - start, MADV_PAGEOUT) == 0) {
      ++out.mappings;
    } else if (errno == EINVAL && out.mappings == 0) {
      out.supported = false;  // the kernel does not know the advice: no use trying the rest
      break;
    }
  }
  return out;
}

}  // namespace neuron
