// The C heap's trimming, set once per process so that memory a library frees after every
// call (oneDNN's GEMM packing buffers) is reused rather than returned to the system and
// faulted in again at the next call.
#pragma once

namespace zt {

// Note [Heap trimming]
// glibc gives the top of its heap back to the system whenever more than M_TRIM_THRESHOLD
// (128 KiB) is free there, and maps blocks above M_MMAP_THRESHOLD (128 KiB) afresh; its
// dynamic rule raises both only when a mapped block is freed, which the host pool never does
// in a step. oneDNN's sgemm allocates and frees its packing buffers on every call, so each
// GEMM grew the heap, page-faulted the new pages in (clearing each) and trimmed them again:
// 500 to 2,500 page faults per step of the 3.3M-parameter benchmark. Both thresholds are
// therefore set to what glibc's dynamic rule would reach (mmap 32 MiB, its maximum; trim
// twice that): the heap keeps at most 64 MiB free at its top. Environment settings
// (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES) win: then nothing is set.
//
// Returns whether the thresholds were set (false: another C library, or the environment
// chose). Thread-safe; the first call decides.
bool keep_freed_heap_memory();

}  // namespace zt
