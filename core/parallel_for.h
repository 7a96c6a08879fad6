// parallel_for: the CPU loops that are not GEMMs (element-wise, normalization, softmax,
// embedding, optimizer, norms) split over a fixed pool of threads, the process's share of the
// cores. Chunks depend only on the loop's size and grain, never on the thread count, so a
// loop that reduces per chunk and combines the chunks in order gives the same bits on 1 and
// on N threads.
#pragma once

#include <cstdint>
#include <type_traits>

namespace zt {

// Threads parallel_for may use in this process (the caller counts as one). Starts at 1;
// a rank sets its share of the cores (the same count as its GEMMs) before training.
void set_parallel_threads(int threads);
int parallel_threads();

// True on a pool thread while it runs a chunk: work inside must not start threads of its
// own (a GEMM called there runs on one thread).
bool in_parallel_chunk();

// The chunks [0, count) is cut into with at least `grain` iterations each: ceil(count / grain)
// of them (at least 1 when count > 0). Chunk i is [i * grain, min(count, (i + 1) * grain)).
std::int64_t parallel_chunk_count(std::int64_t count, std::int64_t grain);

namespace detail {
using ChunkFn = void (*)(const void* context, std::int64_t chunk, std::int64_t begin,
                         std::int64_t end);
void run_chunks(std::int64_t count, std::int64_t grain, const void* context, ChunkFn fn);
}  // namespace detail

// Calls fn(chunk, begin, end) once for every chunk of [0, count) (see parallel_chunk_count),
// on up to parallel_threads() threads, and returns when all are done. Chunks run in no
// particular order; fn must write disjoint memory per chunk. Runs on the calling thread alone
// when there is one chunk, one thread, or the pool is busy with another caller (ranks as
// threads) or this is a pool thread. The first exception fn throws is rethrown here, after
// every started chunk has finished.
template <typename Fn>
void parallel_for_chunks(std::int64_t count, std::int64_t grain, const Fn& fn) {
  static_assert(std::is_invocable_v<const Fn&, std::int64_t, std::int64_t, std::int64_t>);
  detail::run_chunks(
      count, grain, &fn,
      [](const void* context, std::int64_t chunk, std::int64_t begin, std::int64_t end) {
        (*static_cast<const Fn*>(context))(chunk, begin, end);
      });
}

// fn(begin, end) over the chunks of [0, count), as parallel_for_chunks.
template <typename Fn>
void parallel_for(std::int64_t count, std::int64_t grain, const Fn& fn) {
  parallel_for_chunks(
      count, grain, [&fn](std::int64_t, std::int64_t begin, std::int64_t end) { fn(begin, end); });
}

}  // namespace zt
