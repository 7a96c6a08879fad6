// CPU attention dropout: row loops over nn/kernels/math/attention_dropout_math.h. The hash of
// every element is most of their cost, so they stay scalar.
#include "nn/kernels/cpu/attention_dropout_cpu.h"

namespace zt::nn::cpu {

void attention_dropout_rows(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                            std::int64_t first_key, const ScoreBlock& p) {
  for (std::int64_t i = 0; i < p.rows; ++i) {
    math::attention_dropout_row(mask, first_query + i, first_key, p.row(i), p.visible(i));
  }
}

void attention_dropout_score_gradient_rows(const math::AttentionDropoutHead& mask,
                                           std::int64_t first_query, std::int64_t first_key,
                                           float* p, float* dp, std::int64_t ld, std::int64_t rows,
                                           std::int64_t n, const float* d) {
  for (std::int64_t i = 0; i < rows; ++i) {
    math::attention_dropout_score_gradient_row(mask, first_query + i, first_key, p + i * ld,
                                               dp + i * ld, d[i], n);
  }
}

}  // namespace zt::nn::cpu
