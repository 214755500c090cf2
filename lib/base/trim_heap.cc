// File: lib/base/trim_heap.cc
#include "lib/base/trim_heap.h"

#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEURON_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NEURON_SANITIZER_ALLOCATOR 1
#endif
#endif

namespace neuron {

void TrimHeap() {
#ifndef NEURON_SANITIZER_ALLOCATOR
  malloc_trim(0);
#endif
}

}  // namespace neuron
