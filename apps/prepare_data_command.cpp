// `zerotrain prepare-data INPUT OUT.bin`: any text file to a byte-level token file.
#include <cstdio>

#include "apps/commands.h"
#include "core/error.h"
#include "data/prepare_data.h"

namespace zt::apps {

int prepare_data_command(const Args& args) {
  if (args.size() != 2) throw UsageError("prepare-data needs INPUT and OUT.bin");
  const data::PrepareDataStats stats = data::prepare_data(args[0], args[1]);
  std::printf("zerotrain: wrote %lld tokens (%lld distinct, vocabulary %u) to %s\n",
              static_cast<long long>(stats.tokens), static_cast<long long>(stats.distinct_tokens),
              stats.vocab_size, args[1].c_str());
  return 0;
}

}  // namespace zt::apps
