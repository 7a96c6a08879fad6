// `zerotrain prepare-data INPUT OUT.bin [--tokenizer PATH [--merges PATH]] [--overwrite]`: a
// text file to a byte-level token file, or with a BPE tokenizer to an llm.c token file.
#include <cstdio>
#include <optional>

#include "apps/commands.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "data/prepare_data.h"

namespace zt::apps {
namespace {

struct PrepareDataArgs {
  std::vector<std::string> positional;
  std::string tokenizer;
  std::string merges;
  bool overwrite = false;
};

// `--name VALUE` or `--name=VALUE` at args[i]; advances i past a separate value.
std::optional<std::string> option_value(const Args& args, std::size_t& i, const std::string& name) {
  if (args[i] == name) {
    if (i + 1 >= args.size()) throw UsageError("prepare-data: " + name + " needs a PATH");
    return args[++i];
  }
  if (args[i].starts_with(name + "=")) return args[i].substr(name.size() + 1);
  return std::nullopt;
}

PrepareDataArgs parse(const Args& args) {
  PrepareDataArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto value = option_value(args, i, "--tokenizer")) {
      parsed.tokenizer = *value;
    } else if (auto merges = option_value(args, i, "--merges")) {
      parsed.merges = *merges;
    } else if (args[i] == "--overwrite") {
      parsed.overwrite = true;
    } else if (args[i].starts_with("--")) {
      throw UsageError("prepare-data: unknown option '" + args[i] + "'");
    } else {
      parsed.positional.push_back(args[i]);
    }
  }
  if (parsed.positional.size() != 2) throw UsageError("prepare-data needs INPUT and OUT.bin");
  if (!parsed.merges.empty() && parsed.tokenizer.empty()) {
    throw UsageError("prepare-data: --merges goes with --tokenizer vocab.json");
  }
  return parsed;
}

}  // namespace

int prepare_data_command(const Args& args) {
  const PrepareDataArgs parsed = parse(args);
  const std::string& input = parsed.positional[0];
  const std::string& output = parsed.positional[1];
  const data::ExistingOutput existing =
      parsed.overwrite ? data::ExistingOutput::kReplace : data::ExistingOutput::kRefuse;
  data::PrepareDataStats stats;
  if (parsed.tokenizer.empty()) {
    stats = data::prepare_data(input, output, existing);
  } else {
    data::BpeTokenizer tokenizer = data::BpeTokenizer::load(parsed.tokenizer, parsed.merges);
    stats = data::prepare_data(input, output, tokenizer, existing);
  }
  std::printf("zerotrain: wrote %lld tokens (%lld distinct, vocabulary %u, %s format) to %s\n",
              static_cast<long long>(stats.tokens), static_cast<long long>(stats.distinct_tokens),
              stats.vocab_size, stats.format, output.c_str());
  return 0;
}

}  // namespace zt::apps
