// What the collective tests share: options with a per-test group name, deterministic input
// patterns, tensors over vectors, and the expected results and byte counts.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace zt::testing {

// The running test's full name plus `suffix`: tests sharing a process never share keys.
inline std::string test_group(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name() + suffix;
}

inline comm::CommOptions test_options(
    const std::string& group, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  comm::CommOptions options;
  options.group_name = group;
  options.timeout = timeout;
  return options;
}

// Rank r's element i: small integers, so f32 sums over a few ranks are exact and results
// can be compared with ==.
inline float integer_pattern(int rank, std::int64_t i) {
  return static_cast<float>((i * 7 + rank * 13) % 101) - 50.0f;
}

// Rank r's element i for bf16 tests: a full bf16 mantissa, magnitude in [1/8, 8), mixed signs.
inline float fractional_pattern(int rank, std::int64_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u +
                    static_cast<std::uint32_t>(rank) * 40503u + 12345u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  const float magnitude =
      std::ldexp(1.0f + static_cast<float>(x & 0x7Fu) / 128.0f, static_cast<int>((x >> 7) % 6) - 3);
  return bf16_bits_to_f32(f32_to_bf16_bits((x >> 12) & 1u ? -magnitude : magnitude));
}

inline std::vector<float> f32_values(int rank, std::int64_t count,
                                     float (*pattern)(int, std::int64_t)) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = pattern(rank, i);
  return values;
}

inline std::vector<std::uint16_t> bf16_values(int rank, std::int64_t count) {
  std::vector<std::uint16_t> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    values[static_cast<std::size_t>(i)] = f32_to_bf16_bits(fractional_pattern(rank, i));
  }
  return values;
}

template <typename T>
Tensor tensor_over(std::vector<T>& values, DType dtype) {
  return Tensor::wrap(values.data(), Shape{static_cast<std::int64_t>(values.size())}, dtype);
}

// Element bytes this rank sends in a ring reduce-scatter / all-gather of `count` elements:
// every chunk but one (its own shard for reduce-scatter, its right neighbour's for
// all-gather), so exactly (n-1)/n of the buffer when n divides count.
inline std::uint64_t ring_reduce_scatter_elements_sent(std::int64_t count, int n, int rank) {
  return static_cast<std::uint64_t>(count - comm::shard_range(count, n, rank).count);
}
inline std::uint64_t ring_all_gather_elements_sent(std::int64_t count, int n, int rank) {
  return static_cast<std::uint64_t>(count - comm::shard_range(count, n, (rank + 1) % n).count);
}

// Counts elements where `actual` differs from `expected` by more than `tolerance(i)` and
// reports the first few, so a broken op fails with one readable message, not a million.
template <typename Actual, typename Expected, typename Tolerance>
std::int64_t count_mismatches(std::int64_t count, Actual actual, Expected expected,
                              Tolerance tolerance, const std::string& what) {
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double a = actual(i);
    const double e = expected(i);
    if (!(std::fabs(a - e) <= tolerance(i))) {
      if (mismatches < 3) {
        ADD_FAILURE() << what << ": element " << i << " is " << a << ", expected " << e
                      << " (tolerance " << tolerance(i) << ")";
      }
      ++mismatches;
    }
  }
  return mismatches;
}

inline auto exact() {
  return [](std::int64_t) { return 0.0; };
}

}  // namespace zt::testing
