// CudaCachingAllocator's segments, blocks and pools.
//
// Note [Stream-ordered reuse]
// Every block belongs to the device's compute stream. deallocate() returns a block to the
// cache at once, even while kernels that use it are still queued, and the next allocate()
// may hand it out at once. That is safe because whatever the new owner does with it is
// enqueued on the same compute stream, after the kernels of the old owner, so the stream
// runs the old owner's last use before the new owner's first. The host never touches
// device blocks directly. Work on another stream (a collective on the comm stream, a copy
// on the copy stream) is outside that order, so its caller keeps the tensor alive until
// the compute stream has waited on that stream's event (the comm layer's Work does this)
// before the last reference goes. Freeing a segment back to CUDA is different: cudaFree
// returns memory the whole device may reuse, so release_cached() first waits for the
// compute stream.
#include "core/device/cuda/cuda_caching_allocator.h"

#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/config/byte_size.h"
#include "core/device/cuda/cuda_check.h"

namespace zt {
namespace {

constexpr std::size_t kLargestBlocksReported = 8;

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

// A piece of a segment (one cudaMalloc): free or handed out. Neighbours in the segment are
// linked so that freed blocks merge back.
struct Block {
  char* data = nullptr;
  std::size_t bytes = 0;
  bool small = false;  // which pool its segment belongs to
  bool in_use = false;
  Block* previous = nullptr;
  Block* next = nullptr;
};

// Free blocks by size, then address: lower_bound finds the best fit.
struct BySizeThenAddress {
  bool operator()(const Block* a, const Block* b) const {
    if (a->bytes != b->bytes) return a->bytes < b->bytes;
    return std::less<const char*>()(a->data, b->data);
  }
};

}  // namespace

struct CudaCachingAllocator::Pools {
  std::mutex mutex;                                                // guards everything below
  std::unordered_map<const void*, std::unique_ptr<Block>> blocks;  // every block, by address
  std::set<Block*, BySizeThenAddress> free_small;
  std::set<Block*, BySizeThenAddress> free_large;
  std::map<std::size_t, std::int64_t> in_use_by_size;  // block bytes -> count
  std::int64_t reserved_bytes = 0;
  std::int64_t segments_obtained = 0;  // cudaMalloc calls that succeeded, ever
  std::int64_t allocated_bytes = 0;
  std::int64_t allocations = 0;

  std::set<Block*, BySizeThenAddress>& free_pool(bool small) {
    return small ? free_small : free_large;
  }
};

namespace {

// The smallest free block of at least `bytes`, taken out of its pool; nullptr if none.
Block* take_best_fit(std::set<Block*, BySizeThenAddress>& pool, std::size_t bytes) {
  Block key;
  key.bytes = bytes;
  const auto found = pool.lower_bound(&key);
  if (found == pool.end()) return nullptr;
  Block* block = *found;
  pool.erase(found);
  return block;
}

}  // namespace

CudaCachingAllocator::CudaCachingAllocator(Device device, void* compute_stream,
                                           std::int64_t max_reserved_bytes)
    : device_(device),
      compute_stream_(compute_stream),
      max_reserved_bytes_(max_reserved_bytes),
      pools_(std::make_unique<Pools>()) {
  ZT_CHECK(device.kind == DeviceKind::kCuda, "a CUDA allocator for " + device.to_string());
  ZT_CHECK(max_reserved_bytes >= 0, "a negative reserved-bytes cap");
}

CudaCachingAllocator::~CudaCachingAllocator() {
  release_cached();
  // Blocks still in use here belong to tensors that outlived their context: a bug upstream,
  // and their memory goes with the CUDA context at exit.
}

void* CudaCachingAllocator::allocate(std::size_t bytes) {
  ZT_CHECK(bytes > 0, "a device allocation of 0 bytes");
  const std::size_t block_bytes = round_up(bytes, kRoundBytes);
  const bool small = block_bytes < kSmallRequestBytes;
  Pools& pools = *pools_;
  std::unique_lock lock(pools.mutex);

  Block* block = take_best_fit(pools.free_pool(small), block_bytes);
  if (block == nullptr) {
    const std::size_t segment_bytes =
        small ? kSegmentRoundBytes : round_up(block_bytes, kSegmentRoundBytes);
    const auto fits_cap = [&] {
      return max_reserved_bytes_ == 0 ||
             pools.reserved_bytes + static_cast<std::int64_t>(segment_bytes) <= max_reserved_bytes_;
    };
    if (!fits_cap()) {
      lock.unlock();
      release_cached();  // cached segments count against the cap: give them back first
      lock.lock();
      block = take_best_fit(pools.free_pool(small), block_bytes);  // another thread freed one
      if (block == nullptr && !fits_cap()) return nullptr;
    }
    if (block == nullptr) {
      CurrentDevice current(device_.index);
      void* data = nullptr;
      cudaError_t status = cudaMalloc(&data, segment_bytes);
      if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // an out-of-memory is not sticky: clear it and try once more
        lock.unlock();
        release_cached();
        lock.lock();
        if (!fits_cap()) return nullptr;  // another thread took the room meanwhile
        status = cudaMalloc(&data, segment_bytes);
        if (status == cudaErrorMemoryAllocation) {
          cudaGetLastError();
          return nullptr;
        }
      }
      detail::check_core_cuda(status, "cudaMalloc",
                              format_byte_size(static_cast<std::int64_t>(segment_bytes)) +
                                  " segment on " + device_.to_string());
      auto segment = std::make_unique<Block>();
      segment->data = static_cast<char*>(data);
      segment->bytes = segment_bytes;
      segment->small = small;
      block = segment.get();
      pools.blocks.emplace(data, std::move(segment));
      pools.reserved_bytes += static_cast<std::int64_t>(segment_bytes);
      ++pools.segments_obtained;
    }
  }

  // Split when the rest can serve a request of the same pool: any 512 B in the small pool,
  // a large request's worth in the large one (smaller leftovers stay with the block).
  const std::size_t rest = block->bytes - block_bytes;
  if (rest >= (block->small ? kRoundBytes : kSmallRequestBytes)) {
    auto tail = std::make_unique<Block>();
    tail->data = block->data + block_bytes;
    tail->bytes = rest;
    tail->small = block->small;
    tail->previous = block;
    tail->next = block->next;
    if (block->next != nullptr) block->next->previous = tail.get();
    block->next = tail.get();
    block->bytes = block_bytes;
    pools.free_pool(tail->small).insert(tail.get());
    pools.blocks.emplace(tail->data, std::move(tail));
  }
  block->in_use = true;
  pools.allocated_bytes += static_cast<std::int64_t>(block->bytes);
  ++pools.allocations;
  ++pools.in_use_by_size[block->bytes];
  return block->data;
}

void CudaCachingAllocator::deallocate(void* data, std::size_t) noexcept {
  if (data == nullptr) return;
  Pools& pools = *pools_;
  std::lock_guard lock(pools.mutex);
  const auto found = pools.blocks.find(data);
  if (found == pools.blocks.end() || !found->second->in_use) return;  // not a live block of ours
  Block* block = found->second.get();
  block->in_use = false;
  pools.allocated_bytes -= static_cast<std::int64_t>(block->bytes);
  --pools.allocations;
  auto in_use = pools.in_use_by_size.find(block->bytes);
  if (in_use != pools.in_use_by_size.end() && --in_use->second == 0) {
    pools.in_use_by_size.erase(in_use);
  }
  auto& pool = pools.free_pool(block->small);
  // Merge with free neighbours: the later block folds into the earlier one.
  if (Block* next = block->next; next != nullptr && !next->in_use) {
    pool.erase(next);
    block->bytes += next->bytes;
    block->next = next->next;
    if (next->next != nullptr) next->next->previous = block;
    pools.blocks.erase(next->data);
  }
  if (Block* previous = block->previous; previous != nullptr && !previous->in_use) {
    pool.erase(previous);
    previous->bytes += block->bytes;
    previous->next = block->next;
    if (block->next != nullptr) block->next->previous = previous;
    pools.blocks.erase(block->data);
    block = previous;
  }
  pool.insert(block);  // the stream order makes it reusable at once: Note [Stream-ordered reuse]
}

void CudaCachingAllocator::fill_zero(void* data, std::size_t bytes) {
  if (bytes == 0) return;
  CurrentDevice current(device_.index);
  ZT_CORE_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, static_cast<cudaStream_t>(compute_stream_)),
                     "zero-filling " + format_byte_size(static_cast<std::int64_t>(bytes)) + " on " +
                         device_.to_string());
}

void CudaCachingAllocator::release_cached() noexcept {
  Pools& pools = *pools_;
  std::lock_guard lock(pools.mutex);
  std::vector<Block*> whole_segments;  // free blocks that are a whole segment
  for (auto* pool : {&pools.free_small, &pools.free_large}) {
    for (Block* block : *pool) {
      if (block->previous == nullptr && block->next == nullptr) whole_segments.push_back(block);
    }
  }
  if (whole_segments.empty()) return;
  try {
    CurrentDevice current(device_.index);
    // Queued kernels may still use these blocks (Note [Stream-ordered reuse]).
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(compute_stream_)) != cudaSuccess) return;
    for (Block* block : whole_segments) {
      // A failed cudaFree (a device already lost) leaves the segment cached: nothing better
      // can be done in a function that must not throw.
      if (cudaFree(block->data) != cudaSuccess) continue;
      pools.free_pool(block->small).erase(block);
      pools.reserved_bytes -= static_cast<std::int64_t>(block->bytes);
      pools.blocks.erase(block->data);
    }
  } catch (...) {
    // CurrentDevice could not select the device: the segments stay cached.
  }
}

AllocatorStats CudaCachingAllocator::stats() const {
  Pools& pools = *pools_;
  std::lock_guard lock(pools.mutex);
  AllocatorStats stats;
  stats.allocated_bytes = pools.allocated_bytes;
  stats.reserved_bytes = pools.reserved_bytes;
  stats.allocations = pools.allocations;
  stats.blocks_obtained = pools.segments_obtained;
  for (auto it = pools.in_use_by_size.rbegin();
       it != pools.in_use_by_size.rend() &&
       stats.largest_allocated_blocks.size() < kLargestBlocksReported;
       ++it) {
    for (std::int64_t i = 0;
         i < it->second && stats.largest_allocated_blocks.size() < kLargestBlocksReported; ++i) {
      stats.largest_allocated_blocks.push_back(static_cast<std::int64_t>(it->first));
    }
  }
  return stats;
}

}  // namespace zt
