// The CPU LayerNorm rows (nn/kernels/cpu/layer_norm_cpu.h): the same bits on every vector path
// this CPU runs, at sizes 0, 1, 22, 256, 1024 and 2^20 + 3, and within a stated tolerance of a
// double-precision reference.
#include "nn/kernels/cpu/layer_norm_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"

namespace zt::nn::cpu {
namespace {

constexpr float kEps = 1e-5f;
const std::int64_t kSizes[] = {0, 1, 22, 256, 1024, (std::int64_t{1} << 20) + 3};

// Seeded normals of `scale` around `offset`: an offset mean exercises the two-pass variance.
std::vector<float> inputs(std::int64_t n, std::uint64_t seed, float scale = 1.0f,
                          float offset = 0.0f) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = offset + scale * standard_normal(seed, i);
  }
  return values;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// One row through both passes on one path; the outputs.
struct RowResult {
  std::vector<float> y, dx, dweight, dbias;
  float mean = 0.0f, rstd = 0.0f;
};

struct RowInputs {
  explicit RowInputs(std::int64_t channels)
      : x(inputs(channels, 1, 3.0f, 2.0f)),
        weight(inputs(channels, 2, 0.2f, 1.0f)),
        bias(inputs(channels, 3, 0.5f)),
        dy(inputs(channels, 4)),
        // Non-zero starting gradients pin that dweight and dbias are accumulated.
        dweight_start(inputs(channels, 5)),
        dbias_start(inputs(channels, 6)) {}
  std::vector<float> x, weight, bias, dy, dweight_start, dbias_start;
};

RowResult run_row(const RowInputs& in, VectorIsa isa) {
  const auto channels = static_cast<std::int64_t>(in.x.size());
  RowResult out;
  out.y.resize(in.x.size());
  out.dx.resize(in.x.size());
  out.dweight = in.dweight_start;
  out.dbias = in.dbias_start;
  layer_norm_forward_row_f32(in.x.data(), in.weight.data(), in.bias.data(), channels, kEps,
                             out.y.data(), &out.mean, &out.rstd, isa);
  layer_norm_backward_row_f32(in.dy.data(), in.x.data(), in.weight.data(), out.mean, out.rstd,
                              channels, out.dx.data(), out.dweight.data(), out.dbias.data(), isa);
  return out;
}

TEST(LayerNormCpu, EveryVectorPathGivesTheBaselineBits) {
  for (const std::int64_t channels : kSizes) {
    const RowInputs in(channels);
    const RowResult baseline = run_row(in, VectorIsa::kBaseline);
    for (const VectorIsa isa : supported_vector_isas()) {
      SCOPED_TRACE(std::string(vector_isa_name(isa)) + " channels " + std::to_string(channels));
      const RowResult got = run_row(in, isa);
      EXPECT_TRUE(same_bits(got.mean, baseline.mean)) << "mean";
      EXPECT_TRUE(same_bits(got.rstd, baseline.rstd)) << "rstd";
      EXPECT_TRUE(same_bits(got.y, baseline.y)) << "y";
      EXPECT_TRUE(same_bits(got.dx, baseline.dx)) << "dx";
      EXPECT_TRUE(same_bits(got.dweight, baseline.dweight)) << "dweight";
      EXPECT_TRUE(same_bits(got.dbias, baseline.dbias)) << "dbias";
    }
  }
}

// max |got - want| / (1 + |want|) over the elements.
double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i])));
  }
  return worst;
}

TEST(LayerNormCpu, RowsMatchADoublePrecisionReference) {
  for (const std::int64_t channels : {std::int64_t{1}, std::int64_t{22}, std::int64_t{256},
                                      std::int64_t{1024}, (std::int64_t{1} << 20) + 3}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const RowInputs in(channels);
    const RowResult got = run_row(in, widest_vector_isa());
    const auto size = in.x.size();
    double sum = 0.0;
    for (const float v : in.x) sum += v;
    const double mean = sum / static_cast<double>(channels);
    double sq = 0.0;
    for (const float v : in.x) sq += (v - mean) * (v - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(channels) + kEps);
    std::vector<double> y(size), n(size), g(size), dx(size), dweight(size), dbias(size);
    double g_sum = 0.0, gn_sum = 0.0;
    for (std::size_t c = 0; c < size; ++c) {
      n[c] = (in.x[c] - mean) * rstd;
      y[c] = n[c] * in.weight[c] + in.bias[c];
      g[c] = static_cast<double>(in.dy[c]) * in.weight[c];
      g_sum += g[c];
      gn_sum += g[c] * n[c];
    }
    for (std::size_t c = 0; c < size; ++c) {
      dx[c] = rstd * (g[c] - g_sum / static_cast<double>(channels) -
                      n[c] * gn_sum / static_cast<double>(channels));
      dweight[c] = in.dweight_start[c] + static_cast<double>(in.dy[c]) * n[c];
      dbias[c] = static_cast<double>(in.dbias_start[c]) + in.dy[c];
    }
    // f32 sums: a few ulps at the model's widths; over 2^20 elements each lane's 65536-term
    // sum drifts further (measured: rstd 5e-6, dweight 2e-5 there, below 3e-7 at 1024).
    const double tolerance = channels > 4096 ? 1e-4 : 1e-6;
    EXPECT_NEAR(got.mean, mean, tolerance * (1.0 + std::abs(mean))) << "mean";
    EXPECT_NEAR(got.rstd, rstd, tolerance * rstd) << "rstd";
    EXPECT_LT(max_error(got.y, y), tolerance) << "y";
    EXPECT_LT(max_error(got.dx, dx), tolerance) << "dx";
    EXPECT_LT(max_error(got.dweight, dweight), tolerance) << "dweight";
    EXPECT_LT(max_error(got.dbias, dbias), tolerance) << "dbias";
  }
}

}  // namespace
}  // namespace zt::nn::cpu
