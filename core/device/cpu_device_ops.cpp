// Host loops behind CpuDeviceOps, over the per-element functions of math/buffer_math.h.
#include "core/device/cpu_device_ops.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "core/device/cpu_streams.h"
#include "core/device/math/buffer_math.h"
#include "core/device/square_sums_cpu.h"
#include "core/error.h"
#include "core/parallel_for.h"

namespace zt {
namespace {

constexpr std::size_t kChunk = 1024;  // elements converted at a time, on the stack

void expect_host_floating(const Tensor& values, const char* op) {
  ZT_CHECK(values.defined(), std::string(op) + " of an undefined tensor");
  ZT_CHECK(values.device().kind == DeviceKind::kCpu,
           std::string(op) + " on the CPU given a tensor on " + values.device().to_string());
  ZT_CHECK(is_floating(values.dtype()), std::string(op) + " needs a floating dtype");
}

// Calls fn(begin, chunk of f32 values) over elements [first, last) of `values`, converting
// when not f32; with `write_back` the (possibly changed) chunk is rounded back into `values`.
template <typename Fn>
void for_each_chunk_in(const Tensor& values, std::size_t first, std::size_t last, bool write_back,
                       const Fn& fn) {
  if (values.dtype() == DType::kF32) {
    fn(first, values.span<float>().subspan(first, last - first));
    return;
  }
  const std::size_t element_bytes = dtype_size(values.dtype());
  auto* bytes = static_cast<std::byte*>(values.data());
  std::array<float, kChunk> chunk;
  for (std::size_t begin = first; begin < last; begin += kChunk) {
    const std::size_t count = std::min(kChunk, last - begin);
    void* at = bytes + begin * element_bytes;
    convert_elements(at, values.dtype(), chunk.data(), DType::kF32, count);
    fn(begin, std::span<float>(chunk.data(), count));
    if (write_back) convert_elements(chunk.data(), DType::kF32, at, values.dtype(), count);
  }
}

// for_each_chunk_in over all of `values`, parallel_for's chunks of it on its threads.
template <typename Fn>
void for_each_chunk(const Tensor& values, bool write_back, const Fn& fn) {
  parallel_for(values.numel(), kParallelGrainElements, [&](std::int64_t first, std::int64_t last) {
    for_each_chunk_in(values, static_cast<std::size_t>(first), static_cast<std::size_t>(last),
                      write_back, fn);
  });
}

}  // namespace

void CpuDeviceOps::fill(const Tensor& values, float value) {
  expect_host_floating(values, "fill");
  for_each_chunk(values, true, [&](std::size_t, std::span<float> chunk) {
    std::fill(chunk.begin(), chunk.end(), value);
  });
}

void CpuDeviceOps::fill_zero_bytes(const Tensor& values) {
  ZT_CHECK(values.device().kind == DeviceKind::kCpu, "fill_zero_bytes of a non-CPU tensor");
  // in parallel_for's chunks: a stage-0 step zeroes every gradient (80 MB at 20M parameters),
  // which took one thread's memset ~4.8 ms and two threads' ~3.2 ms on a 2-core Xeon
  auto* bytes = static_cast<std::byte*>(values.data());
  constexpr std::int64_t kGrainBytes = kParallelGrainElements * sizeof(float);
  parallel_for(static_cast<std::int64_t>(values.nbytes()), kGrainBytes,
               [&](std::int64_t first, std::int64_t last) {
                 std::memset(bytes + first, 0, static_cast<std::size_t>(last - first));
               });
}

void CpuDeviceOps::scale(const Tensor& values, float factor) {
  expect_host_floating(values, "scale");
  for_each_chunk(values, true, [&](std::size_t, std::span<float> chunk) {
    for (float& v : chunk) v = buffer_math::scaled(v, factor);
  });
}

void CpuDeviceOps::axpby(float alpha, const Tensor& x, float beta, const Tensor& y) {
  expect_host_floating(x, "axpby");
  expect_host_floating(y, "axpby");
  ZT_CHECK(x.numel() == y.numel(), "axpby of tensors of different sizes");
  // x converted chunk by chunk alongside y's chunks (on the stack of the thread running them).
  const std::size_t x_element_bytes = dtype_size(x.dtype());
  const auto* x_bytes = static_cast<const std::byte*>(x.data());
  for_each_chunk(y, true, [&](std::size_t begin, std::span<float> chunk) {
    std::array<float, kChunk> x_chunk;
    for (std::size_t done = 0; done < chunk.size(); done += kChunk) {
      const std::size_t count = std::min(kChunk, chunk.size() - done);
      const float* xs = x_chunk.data();
      if (x.dtype() == DType::kF32) {
        xs = x.data_as<float>() + begin + done;
      } else {
        convert_elements(x_bytes + (begin + done) * x_element_bytes, x.dtype(), x_chunk.data(),
                         DType::kF32, count);
      }
      float* ys = chunk.data() + done;
      for (std::size_t i = 0; i < count; ++i) ys[i] = buffer_math::axpby(alpha, xs[i], beta, ys[i]);
    }
  });
}

HostScalar CpuDeviceOps::sum_of_squares(const Tensor& values) {
  expect_host_floating(values, "sum_of_squares");
  // Per chunk in eight lanes (Note [Square sums in eight lanes]), then over the chunks in
  // order: the same bits on any thread count and vector path. Converted pieces of kChunk
  // elements keep each element in the lane of its place in the chunk.
  static_assert(kChunk % kSquareSumLanes == 0);
  return parallel_sum(
      values.numel(), kParallelGrainElements, [&](std::int64_t first, std::int64_t last) {
        SquareSumLanes lanes{};
        for_each_chunk_in(values, static_cast<std::size_t>(first), static_cast<std::size_t>(last),
                          false, [&](std::size_t, std::span<float> chunk) {
                            accumulate_square_sums(chunk.data(), chunk.size(), lanes);
                          });
        return total_of_lanes(lanes);
      });
}

void CpuDeviceOps::cast(const Tensor& src, const Tensor& dst) {
  expect_host_floating(src, "cast");
  expect_host_floating(dst, "cast");
  ZT_CHECK(src.numel() == dst.numel(), "cast between tensors of different sizes");
  const auto* src_bytes = static_cast<const std::byte*>(src.data());
  auto* dst_bytes = static_cast<std::byte*>(dst.data());
  const std::size_t src_element_bytes = dtype_size(src.dtype());
  const std::size_t dst_element_bytes = dtype_size(dst.dtype());
  parallel_for(src.numel(), kParallelGrainElements, [&](std::int64_t first, std::int64_t last) {
    const auto begin = static_cast<std::size_t>(first);
    convert_elements(src_bytes + begin * src_element_bytes, src.dtype(),
                     dst_bytes + begin * dst_element_bytes, dst.dtype(),
                     static_cast<std::size_t>(last - first));
  });
}

void CpuDeviceOps::copy(const Tensor& src, const Tensor& dst) {
  ZT_CHECK(src.dtype() == dst.dtype() && src.numel() == dst.numel(),
           "copy between tensors of different dtypes or sizes");
  ZT_CHECK(src.device().kind == DeviceKind::kCpu && dst.device().kind == DeviceKind::kCpu,
           "a CPU copy given a tensor on a device");
  if (src.numel() > 0 && src.data() != dst.data())
    std::memmove(dst.data(), src.data(), src.nbytes());
}

void CpuDeviceOps::copy_on(const Tensor& src, const Tensor& dst, DeviceStream& stream) {
  if (stream.is_inline()) {
    copy(src, dst);
    return;
  }
  auto* worker = dynamic_cast<CpuWorkerStream*>(&stream);
  ZT_CHECK(worker != nullptr, "a CPU copy on stream " + stream.name() + ", not a CPU stream");
  ZT_CHECK(src.dtype() == dst.dtype() && src.numel() == dst.numel(),
           "copy between tensors of different dtypes or sizes");
  // The tensors ride along, so their storage outlives the copy.
  worker->enqueue([this, src, dst] { copy(src, dst); });
}

DeviceOps& cpu_device_ops() {
  static CpuDeviceOps ops;
  return ops;
}

}  // namespace zt
