// The CPU cross-entropy row (nn/kernels/cpu/cross_entropy_cpu.h): the same bits on every
// vector path this CPU runs, for 1, 22, 256 and 2^16 + 3 classes, in place or not; against
// a double-precision softmax; padded columns left out (Note [Padded vocabulary]).
#include "nn/kernels/cpu/cross_entropy_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"

namespace zt::nn::cpu {
namespace {

std::vector<float> logits(std::int64_t classes, std::uint64_t seed) {
  std::vector<float> z(static_cast<std::size_t>(classes));
  for (std::size_t c = 0; c < z.size(); ++c) z[c] = 4.0f * standard_normal(seed, c);
  return z;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CrossEntropyCpu, EveryVectorPathGivesTheBaselineBits) {
  for (const std::int64_t classes :
       {std::int64_t{1}, std::int64_t{22}, std::int64_t{256}, (std::int64_t{1} << 16) + 3}) {
    const std::vector<float> z = logits(classes, 5);
    const auto target = static_cast<std::int32_t>(classes / 3);
    std::vector<float> dz_baseline(z.size());
    const float loss_baseline = softmax_cross_entropy_row_f32(
        z.data(), classes, classes, target, 0.5f, dz_baseline.data(), VectorIsa::kBaseline);
    for (const VectorIsa isa : supported_vector_isas()) {
      const std::string what =
          std::string(vector_isa_name(isa)) + ", classes " + std::to_string(classes);
      std::vector<float> dz(z.size());
      const float loss =
          softmax_cross_entropy_row_f32(z.data(), classes, classes, target, 0.5f, dz.data(), isa);
      EXPECT_EQ(std::memcmp(&loss, &loss_baseline, sizeof loss), 0) << "loss, " << what;
      EXPECT_TRUE(same_bits(dz, dz_baseline)) << "dz, " << what;
      std::vector<float> in_place = z;  // dz = z, as the loss layer may call it
      const float loss_in_place = softmax_cross_entropy_row_f32(in_place.data(), classes, classes,
                                                                target, 0.5f, in_place.data(), isa);
      EXPECT_EQ(loss_in_place, loss_baseline) << "in place, " << what;
      EXPECT_TRUE(same_bits(in_place, dz_baseline)) << "dz in place, " << what;
    }
  }
}

TEST(CrossEntropyCpu, MatchesADoubleSoftmax) {
  const std::int64_t classes = 1003;
  const std::vector<float> z = logits(classes, 6);
  const std::int32_t target = 17;
  std::vector<float> dz(z.size());
  const float loss =
      softmax_cross_entropy_row_f32(z.data(), classes, classes, target, 0.25f, dz.data());
  double max = -INFINITY, sum = 0.0;
  for (const float v : z) max = std::max(max, double{v});
  for (const float v : z) sum += std::exp(double{v} - max);
  EXPECT_NEAR(loss, std::log(sum) - (z[target] - max), 2e-6);
  for (std::int64_t c = 0; c < classes; ++c) {
    const double p = std::exp(double{z[static_cast<std::size_t>(c)]} - max) / sum;
    EXPECT_NEAR(dz[static_cast<std::size_t>(c)], 0.25 * (p - (c == target ? 1.0 : 0.0)), 1e-7)
        << "class " << c;
  }
}

// A vocabulary of 300 padded to 320 columns, the padded logits the row's largest: the loss and
// gradient are those of the first 300 logits alone (a double softmax over them), and the padded
// columns' gradient is exactly 0, on every vector path, in place or not.
TEST(CrossEntropyCpu, PaddedColumnsTakeNoPartInTheSoftmax) {
  const std::int64_t classes = 300, columns = 320;
  std::vector<float> z = logits(columns, 7);
  for (std::int64_t c = classes; c < columns; ++c) z[static_cast<std::size_t>(c)] = 40.0f;
  const std::int32_t target = 123;
  double max = -INFINITY, sum = 0.0;
  for (std::int64_t c = 0; c < classes; ++c) max = std::max(max, double{z[c]});
  for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(double{z[c]} - max);
  const double expected_loss = std::log(sum) - (z[target] - max);
  for (const VectorIsa isa : supported_vector_isas()) {
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(std::string(vector_isa_name(isa)) + (in_place ? ", in place" : ""));
      std::vector<float> row = z, dz(z.size(), -1.0f);
      float* out = in_place ? row.data() : dz.data();
      const float loss =
          softmax_cross_entropy_row_f32(row.data(), classes, columns, target, 0.5f, out, isa);
      EXPECT_NEAR(loss, expected_loss, 2e-6);
      for (std::int64_t c = 0; c < classes; ++c) {
        const double p = std::exp(double{z[static_cast<std::size_t>(c)]} - max) / sum;
        EXPECT_NEAR(out[c], 0.5 * (p - (c == target ? 1.0 : 0.0)), 1e-7) << "class " << c;
      }
      for (std::int64_t c = classes; c < columns; ++c) {
        EXPECT_EQ(out[c], 0.0f) << "padded column " << c;
      }
      // The same bits as the unpadded row of the first 300 logits.
      std::vector<float> unpadded(z.begin(), z.begin() + classes), dz_unpadded(unpadded.size());
      const float loss_unpadded = softmax_cross_entropy_row_f32(
          unpadded.data(), classes, classes, target, 0.5f, dz_unpadded.data(), isa);
      EXPECT_EQ(loss, loss_unpadded);
      EXPECT_EQ(std::memcmp(out, dz_unpadded.data(), dz_unpadded.size() * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace zt::nn::cpu
