// `zerotrain prepare-data IN... OUT.bin [--tokenizer PATH [--merges PATH]] [--eot-id N]
// [--val-fraction F [--val-out PATH]] [--overwrite]`: text files (documents) to a byte-level
// token file, or with a BPE tokenizer to llm.c token files, optionally with a validation file.
#include <charconv>
#include <cstdio>
#include <optional>

#include "apps/commands.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "data/prepare_data.h"
#include "data/token_corpus.h"

namespace zt::apps {
namespace {

namespace fs = std::filesystem;

struct PrepareDataArgs {
  std::vector<std::string> positional;
  std::string tokenizer;
  std::string merges;
  std::optional<std::string> eot_id;
  std::optional<std::string> val_fraction;
  std::string val_out;
  bool overwrite = false;
};

// `--name VALUE` or `--name=VALUE` at args[i]; advances i past a separate value. `value`
// names the value in the message when it is missing ("PATH").
std::optional<std::string> option_value(const Args& args, std::size_t& i, const std::string& name,
                                        const char* value) {
  if (args[i] == name) {
    if (i + 1 >= args.size()) throw UsageError("prepare-data: " + name + " needs a " + value);
    return args[++i];
  }
  if (args[i].starts_with(name + "=")) return args[i].substr(name.size() + 1);
  return std::nullopt;
}

PrepareDataArgs parse(const Args& args) {
  PrepareDataArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto tokenizer = option_value(args, i, "--tokenizer", "PATH")) {
      parsed.tokenizer = *tokenizer;
    } else if (auto merges = option_value(args, i, "--merges", "PATH")) {
      parsed.merges = *merges;
    } else if (auto eot = option_value(args, i, "--eot-id", "token id N")) {
      parsed.eot_id = *eot;
    } else if (auto fraction = option_value(args, i, "--val-fraction", "fraction F")) {
      parsed.val_fraction = *fraction;
    } else if (auto val_out = option_value(args, i, "--val-out", "PATH")) {
      parsed.val_out = *val_out;
    } else if (args[i] == "--overwrite") {
      parsed.overwrite = true;
    } else if (args[i].starts_with("--")) {
      throw UsageError("prepare-data: unknown option '" + args[i] + "' (see prepare-data --help)");
    } else {
      parsed.positional.push_back(args[i]);
    }
  }
  if (parsed.positional.empty()) throw UsageError("prepare-data needs IN... and OUT.bin");
  if (parsed.positional.size() == 1) {
    throw UsageError("prepare-data needs IN... and OUT.bin, got only '" + parsed.positional[0] +
                     "'; the last argument is the output");
  }
  if (!parsed.merges.empty() && parsed.tokenizer.empty()) {
    throw UsageError("prepare-data: --merges '" + parsed.merges +
                     "' goes with --tokenizer vocab.json");
  }
  if (!parsed.val_out.empty() && !parsed.val_fraction) {
    throw UsageError("prepare-data: --val-out '" + parsed.val_out +
                     "' goes with --val-fraction F (which documents to write there)");
  }
  return parsed;
}

double parse_val_fraction(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > 0 && value < 1)) {
    throw UsageError("prepare-data: --val-fraction '" + text +
                     "' is not a fraction strictly between 0 and 1 (e.g. 0.05)");
  }
  return value;
}

std::int32_t parse_eot_id(const std::string& text, std::uint32_t limit, const std::string& of) {
  std::int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      static_cast<std::uint64_t>(value) >= limit) {
    throw UsageError("prepare-data: --eot-id '" + text + "' is not a token id for " + of +
                     " (a whole number in [0, " + std::to_string(limit) + "))");
  }
  return static_cast<std::int32_t>(value);
}

// The inputs, patterns (* ? [) expanded in sorted order.
std::vector<fs::path> expand_inputs(const std::vector<std::string>& patterns) {
  std::vector<fs::path> inputs;
  for (const std::string& pattern : patterns) {
    std::vector<fs::path> paths = data::expand_token_path(pattern);
    if (paths.empty()) {
      throw UsageError("prepare-data: the input pattern '" + pattern +
                       "' matches no file; check the pattern (quote it so that the shell "
                       "does not expand it first)");
    }
    inputs.insert(inputs.end(), paths.begin(), paths.end());
  }
  return inputs;
}

// OUT's sibling <stem>_val<extension>: corpus.bin -> corpus_val.bin.
fs::path default_val_path(const fs::path& output) {
  return output.parent_path() / (output.stem().string() + "_val" + output.extension().string());
}

data::PrepareDataRequest make_request(const PrepareDataArgs& parsed) {
  data::PrepareDataRequest request;
  const std::vector<std::string> patterns(parsed.positional.begin(), parsed.positional.end() - 1);
  request.inputs = expand_inputs(patterns);
  request.output = parsed.positional.back();
  request.existing =
      parsed.overwrite ? data::ExistingOutput::kReplace : data::ExistingOutput::kRefuse;
  if (parsed.val_fraction) {
    request.val_fraction = parse_val_fraction(*parsed.val_fraction);
    if (request.inputs.size() < 2) {
      throw UsageError("prepare-data: --val-fraction " + *parsed.val_fraction +
                       " needs at least two input documents (each input file is one, and "
                       "the split keeps documents whole), got only '" +
                       request.inputs.front().string() + "'");
    }
    request.val_output =
        parsed.val_out.empty() ? default_val_path(request.output) : fs::path(parsed.val_out);
    if (fs::weakly_canonical(request.val_output) == fs::weakly_canonical(request.output)) {
      throw UsageError("prepare-data: --val-out '" + request.val_output.string() +
                       "' is OUT itself; choose another path for the validation file");
    }
  }
  return request;
}

void print_stats(const data::PrepareDataRequest& request, const data::PrepareDataStats& stats) {
  std::printf(
      "zerotrain: wrote %lld tokens from %lld document%s (%lld distinct, vocabulary %u, %s "
      "format) to %s\n",
      static_cast<long long>(stats.tokens), static_cast<long long>(stats.documents),
      stats.documents == 1 ? "" : "s", static_cast<long long>(stats.distinct_tokens),
      stats.vocab_size, stats.format, request.output.c_str());
  if (!request.val_output.empty()) {
    std::printf("zerotrain: wrote %lld validation tokens from %lld document%s to %s\n",
                static_cast<long long>(stats.val_tokens),
                static_cast<long long>(stats.val_documents), stats.val_documents == 1 ? "" : "s",
                request.val_output.c_str());
  }
}

}  // namespace

int prepare_data_command(const Args& args) {
  const PrepareDataArgs parsed = parse(args);
  data::PrepareDataRequest request = make_request(parsed);
  data::PrepareDataStats stats;
  if (parsed.tokenizer.empty()) {
    // The byte-level vocabulary has no end-of-text token: documents are not separated
    // unless --eot-id names one (the vocabulary then grows to hold it).
    if (parsed.eot_id) {
      request.eot_id =
          parse_eot_id(*parsed.eot_id, std::uint32_t{1} << 31, "the byte-level vocabulary");
    }
    stats = data::prepare_data(request);
  } else {
    data::BpeTokenizer tokenizer = data::BpeTokenizer::load(parsed.tokenizer, parsed.merges);
    if (parsed.eot_id) {
      request.eot_id =
          parse_eot_id(*parsed.eot_id, tokenizer.vocab_size(), "'" + parsed.tokenizer + "'");
    } else {
      request.eot_id = tokenizer.added_token_id("<|endoftext|>");
      if (!request.eot_id) {
        throw UsageError("prepare-data: the tokenizer '" + parsed.tokenizer +
                         "' has no <|endoftext|> added token to start each document with; "
                         "pass --eot-id N, the id of its end-of-text token");
      }
    }
    stats = data::prepare_data(request, tokenizer);
  }
  print_stats(request, stats);
  return 0;
}

}  // namespace zt::apps
