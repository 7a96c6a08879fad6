// parallel_for: the CPU loops that are not GEMMs (element-wise, normalization, softmax,
// embedding, attention heads, optimizer, buffer arithmetic) split over a fixed pool of threads,
// the rank's share of the cores. Note [Chunks fixed by size] says why the results do not
// depend on the thread count.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

namespace zt {

// Note [Chunks fixed by size]
// A loop over [0, count) is cut into chunks of `grain` iterations (the last one shorter):
// chunk i is [i * grain, min(count, (i + 1) * grain)). The cut depends on the loop's size and
// grain only, never on how many threads run it, so a loop whose chunks write disjoint memory,
// and whose reductions are summed per chunk and then over the chunks in chunk order
// (parallel_sum), gives the same bits on 1 and on N threads. Scratch a loop needs is sized
// per chunk (or per a fixed number of chunks), so the memory it asks the tracker for, and the
// estimator's replay of it, does not depend on the machine's core count either.

// Threads parallel_for may use in this process, the calling thread included. Starts at 1;
// a rank sets its share of the cores (the count its GEMMs use) when it joins a job.
void set_parallel_threads(int threads);
int parallel_threads();

// True while this thread runs a chunk of a parallel_for (on the pool or inline): a loop
// started there runs inline, and a GEMM called there runs on one thread, so threads never
// multiply.
bool in_parallel_chunk();

// Elements a chunk of a memory-bound loop gets (128 KiB of f32): enough work to pay for waking
// a thread, few enough chunks to balance two to a few dozen cores.
inline constexpr std::int64_t kParallelGrainElements = std::int64_t{1} << 15;

// The grain of a loop over rows of `row_elements`: about kParallelGrainElements per chunk.
constexpr std::int64_t parallel_row_grain(std::int64_t row_elements) {
  if (row_elements <= 0) return kParallelGrainElements;
  return std::max<std::int64_t>(1, kParallelGrainElements / row_elements);
}

// The number of chunks [0, count) is cut into: ceil(count / grain).
std::int64_t parallel_chunk_count(std::int64_t count, std::int64_t grain);

namespace detail {
using ChunkFn = void (*)(const void* context, std::int64_t chunk, std::int64_t begin,
                         std::int64_t end);
void run_chunks(std::int64_t count, std::int64_t grain, const void* context, ChunkFn fn);
}  // namespace detail

// Calls fn(chunk, begin, end) once for every chunk of [0, count) (Note [Chunks fixed by
// size]) on up to parallel_threads() threads and returns when all are done. Chunks run in no
// particular order and must write disjoint memory. The loop runs on the calling thread alone,
// chunk after chunk, when it has one chunk, the process has one thread, this is already a
// chunk of another loop, or the pool is serving another caller (ranks as threads in one
// process: a busy pool never makes a caller wait, and threads never exceed the pool's). The
// first exception fn throws is rethrown here once every chunk that started has finished; the
// chunks not yet started then never start.
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

// The most chunks a parallel_sum cuts its loop into: its partial sums live on the stack.
inline constexpr std::int64_t kMaxSumChunks = 256;

// The grain parallel_sum uses for `count` iterations and the grain the caller asked for:
// `grain`, raised where needed so that there are at most kMaxSumChunks chunks (a function of
// the loop's size alone, Note [Chunks fixed by size]).
std::int64_t parallel_sum_grain(std::int64_t count, std::int64_t grain);

// Σ over the chunks of [0, count), in chunk order, of fn(begin, end) (a double): the same bits
// on any thread count. The chunks are those of parallel_sum_grain(count, grain).
template <typename Fn>
double parallel_sum(std::int64_t count, std::int64_t grain, const Fn& fn) {
  static_assert(std::is_invocable_r_v<double, const Fn&, std::int64_t, std::int64_t>);
  std::array<double, kMaxSumChunks> partial_sums;
  const std::int64_t sum_grain = parallel_sum_grain(count, grain);
  parallel_for_chunks(count, sum_grain,
                      [&](std::int64_t chunk, std::int64_t begin, std::int64_t end) {
                        partial_sums[static_cast<std::size_t>(chunk)] = fn(begin, end);
                      });
  double sum = 0.0;
  const std::int64_t chunks = parallel_chunk_count(count, sum_grain);
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    sum += partial_sums[static_cast<std::size_t>(chunk)];
  }
  return sum;
}

}  // namespace zt
