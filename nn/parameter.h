// What a module declares about each of its parameters: name, shape and how to initialize
// it. Where the parameter lives (a flat buffer, a shard, host memory) is not its business.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"

namespace zt::nn {

struct Init {
  enum class Kind { kZeros, kOnes, kNormal, kUniform };
  Kind kind = Kind::kZeros;
  float scale = 0.0f;  // std for kNormal, bound for kUniform

  static Init zeros() { return {Kind::kZeros, 0.0f}; }
  static Init ones() { return {Kind::kOnes, 0.0f}; }
  static Init normal(float std) { return {Kind::kNormal, std}; }
  static Init uniform(float bound) { return {Kind::kUniform, bound}; }
};

struct ParameterSpec {
  std::string name;  // "fc1.weight"
  Shape shape;
  Init init;
};

// Fills elements [begin, begin + out.size()) of a parameter initialized by `init` from the
// counter-based stream `key`. Filling a shard gives exactly that slice of the full tensor.
void initialize_parameter(const Init& init, std::uint64_t key, std::int64_t begin,
                          std::span<float> out);

// The parameters of one module call, in the order of its parameter_specs().
using ParameterViews = std::span<const Tensor>;

}  // namespace zt::nn
