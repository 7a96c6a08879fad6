// Token id validation shared by the kernel backends.
#include "nn/kernels/token_ids.h"

#include <string>

#include "core/error.h"

namespace zt::nn {

// Token ids are user data (a token file, a tokenizer with another vocabulary): a bad one is
// a FormatError naming where it is, not an internal error.
void check_token_ids(const std::int32_t* ids, std::int64_t count, std::int64_t seq_len,
                     std::int64_t vocab_size) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      throw FormatError("token id " + std::to_string(ids[i]) + " at batch row " +
                        std::to_string(i / seq_len) + ", position " + std::to_string(i % seq_len) +
                        " is outside the vocabulary [0, " + std::to_string(vocab_size) +
                        ") of model.vocab_size = " + std::to_string(vocab_size) +
                        "; check that the data was tokenized with this vocabulary");
    }
  }
}

}  // namespace zt::nn
