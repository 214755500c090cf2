// File: lib/base/startup_pages.h
// Gives back the library pages a long-running agent touched only while starting. gRPC,
// OpenSSL and protobuf initialisation fault in megabytes of code and read-only data once (the
// kernel maps up to 64 KB around each fault), and those clean file pages stay in the process's
// RSS, and its cgroup's memory, for its whole life. After start-up they are cold: advising the
// kernel to page them out (MADV_PAGEOUT) drops them; a page still used is faulted back from the
// page cache on its next touch. Only read-only file mappings are advised, never anonymous
// memory or writable mappings.
#pragma once

#include <cstddef>

namespace neuron {

struct ReleasedPages {
  int mappings = 0;       // read-only file mappings advised
  bool supported = true;  // false: the kernel has no MADV_PAGEOUT (before Linux 5.4)
};

// Advises every read-only file-backed mapping of this process (from /proc/self/maps).
ReleasedPages ReleaseStartupPages();

}  // namespace neuron
