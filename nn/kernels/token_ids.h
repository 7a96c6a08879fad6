// The check every backend makes of token ids (user data) before an embedding reads them.
#pragma once

#include <cstdint>

namespace zt::nn {

// Throws FormatError naming the first id of ids (count, rows of seq_len) outside
// [0, vocab_size): the data was tokenized with another vocabulary.
void check_token_ids(const std::int32_t* ids, std::int64_t count, std::int64_t seq_len,
                     std::int64_t vocab_size);

}  // namespace zt::nn
