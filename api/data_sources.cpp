// The public batch sources: the data layer's, under the API's names.
#include "data/lm_batch.h"
#include "zerotrain/data.h"

namespace zerotrain {

std::unique_ptr<BatchSource> token_file_source(const std::filesystem::path& path,
                                               std::int64_t seq_len, std::uint64_t seed) {
  return zt::data::make_token_file_source(path, seq_len, seed);
}

std::unique_ptr<BatchSource> synthetic_classification_source(std::uint64_t seed,
                                                             std::int64_t input_dim,
                                                             std::int64_t num_classes) {
  return zt::data::make_synthetic_classification_source(seed, input_dim, num_classes);
}

}  // namespace zerotrain
