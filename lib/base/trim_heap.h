// File: lib/base/trim_heap.h
// Gives the heap's free pages back to the OS after a burst of allocations (a large list parsed
// and dropped), so the process does not keep its high-water mark for life.
#pragma once

namespace neuron {

// glibc's malloc_trim(0). A no-op under ASan/TSan: their allocators replace glibc's, whose
// arenas are then initialised lazily by the first malloc_trim, and two threads doing that at
// once crash inside glibc (seen in CI: two reflectors relisting together).
void TrimHeap();

}  // namespace neuron
