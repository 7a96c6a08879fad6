// The table of every config key. Adding a key: a field in config.h and one builder call
// below (name, field, default, range, unit, one line of documentation); loading, --set,
// docs/CONFIG.md and the effective-config writer pick it up from here.
#include "core/config/config_schema.h"

#include <array>
#include <utility>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"

namespace zt {
namespace {

using Aliases = std::vector<std::string>;
enum class Emptiness { kMayBeEmpty, kNonEmpty };

// Fills one SectionSpec with keys bound to the fields of one section struct.
template <typename Section>
class SectionBuilder {
 public:
  // Holds the schema and an index, not a reference, so adding sections never invalidates it.
  SectionBuilder(std::vector<SectionSpec>& schema, Section Config::*member)
      : schema_(schema), index_(schema.size() - 1), member_(member) {}

  // `aliases`: names other frameworks use for the key, offered only as did-you-mean.
  KeySpec& integer(std::string name, std::int64_t Section::*field, std::int64_t fallback,
                   Range range, std::string unit, std::string doc, Aliases aliases = {}) {
    KeySpec& key = add(KeyType::kInt, std::move(name), field, fallback, range, std::move(unit),
                       std::move(doc));
    key.aliases = std::move(aliases);
    return key;
  }
  KeySpec& size(std::string name, std::int64_t Section::*field, std::string_view fallback,
                Range range, std::string doc) {
    return add(KeyType::kSize, std::move(name), field, *parse_byte_size(fallback), range, "bytes",
               std::move(doc));
  }
  KeySpec& real(std::string name, double Section::*field, double fallback, Range range,
                std::string unit, std::string doc, Aliases aliases = {}) {
    KeySpec& key = add(KeyType::kFloat, std::move(name), field, fallback, range, std::move(unit),
                       std::move(doc));
    key.aliases = std::move(aliases);
    return key;
  }
  KeySpec& boolean(std::string name, bool Section::*field, bool fallback, std::string doc) {
    return add(KeyType::kBool, std::move(name), field, fallback, Range::any(), "", std::move(doc));
  }
  KeySpec& string(std::string name, std::string Section::*field, std::string fallback,
                  Emptiness emptiness, std::string doc) {
    KeySpec& key = add(KeyType::kString, std::move(name), field, std::move(fallback), Range::any(),
                       "", std::move(doc));
    key.allow_empty = emptiness == Emptiness::kMayBeEmpty;
    return key;
  }
  // A string key naming a file or directory (KeySpec::is_path).
  KeySpec& path(std::string name, std::string Section::*field, std::string fallback,
                Emptiness emptiness, std::string doc) {
    KeySpec& key = string(std::move(name), field, std::move(fallback), emptiness, std::move(doc));
    key.is_path = true;
    return key;
  }

  // An enum field, with the names from its table in config_enums.h.
  template <typename E, std::size_t N>
  KeySpec& choice(std::string name, E Section::*field, const std::array<EnumName<E>, N>& names,
                  E fallback, std::string doc) {
    KeySpec& key = push(KeyType::kEnum, std::move(name), Range::any(), "", std::move(doc));
    for (const EnumName<E>& entry : names) {
      key.enum_values.emplace_back(entry.name);
      if (entry.value == fallback) key.default_value = std::string(entry.name);
    }
    Section Config::*member = member_;
    key.assign = [member, field, names](Config& config, const KeyValue& value) {
      for (const EnumName<E>& entry : names) {
        if (entry.name == std::get<std::string>(value)) (config.*member).*field = entry.value;
      }
    };
    key.read = [member, field](const Config& config) -> KeyValue {
      return std::string(config_name((config.*member).*field));
    };
    return key;
  }

 private:
  KeySpec& push(KeyType type, std::string name, Range range, std::string unit, std::string doc) {
    SectionSpec& spec = schema_[index_];
    KeySpec& key = spec.keys.emplace_back();
    key.section = spec.name;
    key.name = std::move(name);
    key.type = type;
    key.range = range;
    key.unit = std::move(unit);
    key.doc = std::move(doc);
    return key;
  }

  // A key whose field holds its KeyValue alternative T directly.
  template <typename T, typename Default>
  KeySpec& add(KeyType type, std::string name, T Section::*field, Default&& fallback, Range range,
               std::string unit, std::string doc) {
    KeySpec& key = push(type, std::move(name), range, std::move(unit), std::move(doc));
    key.default_value = T(std::forward<Default>(fallback));
    Section Config::*member = member_;
    key.assign = [member, field](Config& config, const KeyValue& value) {
      (config.*member).*field = std::get<T>(value);
    };
    key.read = [member, field](const Config& config) -> KeyValue {
      return (config.*member).*field;
    };
    return key;
  }

  std::vector<SectionSpec>& schema_;
  std::size_t index_;
  Section Config::*member_;
};

template <typename Section>
SectionBuilder<Section> section(std::vector<SectionSpec>& schema, std::string name,
                                Section Config::*member, std::string doc) {
  schema.push_back(SectionSpec{std::move(name), std::move(doc), {}});
  return SectionBuilder<Section>(schema, member);
}

constexpr double kMaxDim = 1e6;

void add_run_model_data(std::vector<SectionSpec>& schema) {
  auto run = section(schema, "run", &Config::run, "Where the run writes and how it is seeded.");
  run.path("dir", &RunConfig::dir, "", Emptiness::kMayBeEmpty,
           "Directory for metrics.jsonl and the effective config (config.toml); empty means "
           "runs/<model.type> (runs/mlp, runs/gpt), so models never share one by default. "
           "One run at a time: a second run into a directory in use stops at once, naming "
           "the first one's pid (the lock is run.dir/.lock).");
  run.boolean("overwrite", &RunConfig::overwrite, false,
              "Replace every output a previous run left in run.dir (metrics.jsonl, "
              "config.toml, memory.json, memory.html, memory/, run_id; never a checkpoint); "
              "when false such a run.dir is refused, so no result is lost by accident.");
  run.integer("seed", &RunConfig::seed, 1234, Range::at_least(0), "",
              "Seeds parameter initialization and the synthetic data.");
  run.integer("log_every", &RunConfig::log_every, 10, Range::at_least(1), "steps",
              "Optimizer steps between progress lines.");

  auto model = section(schema, "model", &Config::model, "The network to train.");
  model.choice("type", &ModelConfig::type, kModelTypeNames, ModelType::kMlp,
               "Architecture: mlp is input_dim -> hidden_dim -> num_classes with ReLU on "
               "synthetic features; gpt is a GPT-2-style decoder-only transformer on tokens "
               "(LayerNorm, learned positions, GELU MLP, biases); llama is a Llama-style one "
               "(RMSNorm, rotary positions, grouped-query attention, SwiGLU MLP, no biases).");
  model.integer("input_dim", &ModelConfig::input_dim, 32, Range::between(1, kMaxDim), "features",
                "Width of each input sample.");
  model.integer("hidden_dim", &ModelConfig::hidden_dim, 128, Range::between(1, kMaxDim), "features",
                "Width of the hidden layer.");
  model.integer("num_classes", &ModelConfig::num_classes, 10, Range::between(2, kMaxDim), "classes",
                "Number of output classes (softmax cross-entropy loss).");
  model.integer("n_layer", &ModelConfig::n_layer, 2, Range::between(1, 1024), "blocks",
                "GPT, Llama: transformer blocks.", {"num_layers", "n_layers"});
  model.integer("n_head", &ModelConfig::n_head, 4, Range::between(1, 1024), "heads",
                "GPT, Llama: attention (query) heads; must divide d_model.",
                {"num_heads", "num_attention_heads"});
  model.integer("d_model", &ModelConfig::d_model, 64, Range::between(1, kMaxDim), "features",
                "GPT, Llama: width of the residual stream.", {"hidden_size", "n_embd", "dim"});
  model.integer("vocab_size", &ModelConfig::vocab_size, 64, Range::between(2, 1 << 24), "tokens",
                "GPT, Llama: vocabulary size (the embedding's and the head's rows); a token "
                "file's vocabulary must fit in the data's (model.data_vocab_size), and the "
                "synthetic corpus uses exactly that many tokens (at most 1024).");
  model.integer("data_vocab_size", &ModelConfig::data_vocab_size, 0, Range::between(0, 1 << 24),
                "tokens",
                "GPT, Llama: the data's vocabulary when model.vocab_size pads past it (GPT-2's "
                "50257 in 50304 rows): the padded rows are no tokens, so the loss's softmax "
                "and sampling leave them out (as llm.c's padded_vocab_size) and a token id at "
                "or past it in the data is an error. 0 = taken from data.tokenizer's "
                "vocabulary, else from the vocab_size of checkpoint.init_from's config.json, "
                "when smaller than model.vocab_size; else model.vocab_size. At most "
                "model.vocab_size.");
  model.integer("seq_len", &ModelConfig::seq_len, 32, Range::between(1, 1 << 20), "tokens",
                "GPT, Llama: tokens per sample (context length).",
                {"block_size", "n_positions", "max_position_embeddings"});
  model.boolean("tie_embeddings", &ModelConfig::tie_embeddings, false,
                "GPT, Llama: the output head uses the token embedding's weights (wte) instead "
                "of its own, as GPT-2 and Llama 3.2 1B do.");
  model.real("dropout", &ModelConfig::dropout, 0.0, Range::at_least(0).below(1), "",
             "GPT, Llama: dropout probability in training, applied as nanoGPT does after the "
             "token (+ position) embedding, on the attention probabilities (after the softmax, "
             "inside the attention kernels) and on the attention's and the MLP's output before "
             "each residual add (inverted: kept values scaled by 1 / (1 - p)). Masks are a hash "
             "of run.seed, the step, the sample's index in the global batch, the layer and the "
             "site, so every ZeRO stage, world size and micro-batch split of a global batch, "
             "activation checkpointing and a resumed run draw the same masks. Validation loss "
             "and generation run without it. cuDNN's attention cannot draw these masks: "
             "runtime.attention = \"cudnn\" with dropout > 0 is refused, and \"auto\" runs "
             "zerotrain's own attention kernels. 0 = off, bit for bit the model without dropout.",
             {"resid_pdrop", "embd_pdrop"});
  model.integer("n_kv_head", &ModelConfig::n_kv_head, 0, Range::between(0, 1024), "heads",
                "Llama: key/value heads of grouped-query attention, each serving n_head / "
                "n_kv_head query heads; must divide n_head. 0 = n_head (multi-head attention).",
                {"num_key_value_heads", "n_kv_heads"});
  model.integer("ffn_dim", &ModelConfig::ffn_dim, 0, Range::between(0, kMaxDim), "features",
                "Llama: hidden width of the SwiGLU MLP. 0 = Llama's default, 8/3 d_model "
                "rounded up to a multiple of 256 (d_model 4096: 11008).",
                {"intermediate_size"});
  model.real("rope_theta", &ModelConfig::rope_theta, 10000.0, Range::greater_than(0).at_most(1e9),
             "", "Llama: base of the rotary embeddings' angles (Llama 2: 10000, Llama 3: 500000).",
             {"rope_base"});
  model.real("norm_eps", &ModelConfig::norm_eps, 1e-5, Range::greater_than(0).at_most(1), "",
             "Llama: epsilon of every RMSNorm.", {"rms_norm_eps"});

  auto data = section(schema, "data", &Config::data, "Where training samples come from.");
  data.path("path", &DataConfig::path, "", Emptiness::kMayBeEmpty,
            "Token files to train on: a path, a glob pattern (\"data/fineweb_train_*.bin\", "
            "expanded in sorted order; matching nothing is an error) or an array of either, "
            "read as one corpus in that order; a training window (seq_len + 1 tokens) never "
            "crosses a file boundary. Empty selects the built-in synthetic data (mlp: a "
            "teacher-labelled classification task; gpt: a seeded Markov chain with a known "
            "entropy rate).")
      .string_list = true;
  data.choice("format", &DataConfig::format, kDataFormatNames, DataFormat::kAuto,
              "Layout of the token files: auto tells zerotrain's own (from `zerotrain "
              "prepare-data`) and llm.c's (magic 20240520, uint16, or 20240801, uint32) apart "
              "by their magic; zerotrain or llmc insists on one; nanogpt reads nanoGPT's "
              "headerless uint16 .bin files. llm.c and nanoGPT files record no vocabulary: "
              "their ids are checked against the data's vocabulary (model.data_vocab_size) as "
              "windows are read.");
  data.path("tokenizer", &DataConfig::tokenizer, "", Emptiness::kMayBeEmpty,
            "The tokenizer data.path was made with (`prepare-data --tokenizer`): a Hugging "
            "Face tokenizer.json with a byte-level BPE model, or GPT-2's vocab.json with "
            "merges.txt beside it; it turns token ids back into text (generation), and "
            "names the bos/eos token ids of `checkpoint export --names hf`'s config.json. "
            "Empty: ids are bytes (prepare-data without --tokenizer).");
  data.real("synthetic_peakedness", &DataConfig::synthetic_peakedness, 3.5,
            Range::at_least(0).at_most(50), "",
            "GPT synthetic corpus: how peaked each Markov transition row is; 0 = uniform "
            "(entropy log vocab_size), higher = more predictable.");
  data.path("val_path", &DataConfig::val_path, "", Emptiness::kMayBeEmpty,
            "GPT: token files to measure the validation loss on (train.eval_every), given "
            "as data.path is (a path, a glob pattern or an array of either, in "
            "data.format); never trained on. Empty: the validation windows come from "
            "data.val_fraction, or for the synthetic corpus from a stream of samples "
            "training never reads.")
      .string_list = true;
  data.real("val_fraction", &DataConfig::val_fraction, 0.0, Range::at_least(0).below(1), "",
            "GPT token files: the fraction of each data.path file's tokens, its last ones, "
            "held out for validation: training windows come from the rest only, validation "
            "windows from them only. 0 = none. Not with data.val_path.");

  auto checkpointing =
      section(schema, "activation_checkpointing", &Config::activation_checkpointing,
              "Recompute activations in backward instead of keeping them.");
  checkpointing.boolean("enabled", &ActivationCheckpointingConfig::enabled, false,
                        "Keep only each checkpointed block's input in forward; recompute the "
                        "block in backward (same gradients, less activation memory).");
  checkpointing.integer("every_n_blocks", &ActivationCheckpointingConfig::every_n_blocks, 1,
                        Range::at_least(1), "blocks",
                        "Checkpoint the blocks whose index is a multiple of this.");
}

void add_train_optimizer(std::vector<SectionSpec>& schema) {
  auto train = section(schema, "train", &Config::train, "Length of the run and batch sizes.");
  train.integer("steps", &TrainConfig::steps, 200, Range::at_least(1), "steps",
                "Optimizer steps to run.", {"max_steps", "num_steps", "train_steps"});
  train.integer("micro_batch_size", &TrainConfig::micro_batch_size, 0, Range::at_least(0),
                "samples",
                "Samples per rank per micro-batch; 0 infers it from global_batch_size (or "
                "uses 32 when that is 0 too).",
                {"batch_size", "train_micro_batch_size_per_gpu"});
  train.integer("grad_accum_steps", &TrainConfig::grad_accum_steps, 0, Range::at_least(0),
                "micro-batches",
                "Micro-batches accumulated per optimizer step; 0 infers it from "
                "global_batch_size and micro_batch_size (or uses 1).",
                {"gradient_accumulation_steps"});
  train.integer("global_batch_size", &TrainConfig::global_batch_size, 0, Range::at_least(0),
                "samples",
                "Samples per optimizer step over all ranks = micro_batch_size x "
                "grad_accum_steps x world size; any two of the three determine the third; 0 "
                "infers it.",
                {"train_batch_size"});
  train.integer("eval_every", &TrainConfig::eval_every, 0, Range::at_least(0), "steps",
                "Optimizer steps between validation losses (val_loss in metrics.jsonl and the "
                "progress line), and one after the last step; 0 = never. Evaluation is a "
                "forward without gradients on the same validation windows every time "
                "(data.val_path, data.val_fraction or the synthetic corpus's held-out "
                "stream); it changes no training result.",
                {"eval_interval", "eval_steps"});
  train.integer("eval_windows", &TrainConfig::eval_windows, 64, Range::at_least(1), "samples",
                "Validation windows (samples: model.seq_len tokens each for a language model) "
                "per validation loss, over all ranks: the same windows and the same val_loss "
                "(up to float summation order) whatever the world size, micro-batch size and "
                "accumulation. Each rank evaluates its share in micro-batches of at most "
                "train.micro_batch_size; val_loss is the mean over all their tokens.",
                {"eval_iters"});
  train.integer("sample_every", &TrainConfig::sample_every, 0, Range::at_least(0), "steps",
                "Optimizer steps between text samples, and one after the last step; 0 = never. "
                "Every rank decodes train.sample_tokens tokens greedily after the first tokens "
                "of the validation data (or of the training data) with the model as it is "
                "sharded (the KV cache in training's memory, phase \"sample\"); rank 0 prints "
                "them, decoded with data.tokenizer when set, as \"prompt\" ▸ \"what the "
                "model wrote\", and writes metrics.jsonl's sample (the whole text) and "
                "sample_prompt (the prompt it starts with). Language models (gpt, llama) only; "
                "it changes no training result.",
                {"sample_interval"});
  train.integer("sample_tokens", &TrainConfig::sample_tokens, 32, Range::at_least(1), "tokens",
                "Tokens each train.sample_every sample generates; with the prompt they must "
                "fit in model.seq_len.",
                {"max_new_tokens"});

  auto optimizer = section(schema, "optimizer", &Config::optimizer, "The update rule.");
  optimizer.choice("type", &OptimizerConfig::type, kOptimizerTypeNames, OptimizerType::kAdamW,
                   "Update rule; adamw decays weights decoupled from the gradient.");
  optimizer.real("lr", &OptimizerConfig::lr, 1e-3, Range::greater_than(0).at_most(10), "",
                 "Learning rate.", {"learning_rate"});
  optimizer.real("momentum", &OptimizerConfig::momentum, 0.9, Range::at_least(0).below(1), "",
                 "SGD momentum; 0 disables it.");
  optimizer.boolean("nesterov", &OptimizerConfig::nesterov, false, "SGD: use Nesterov momentum.");
  optimizer.real("beta1", &OptimizerConfig::beta1, 0.9, Range::at_least(0).below(1), "",
                 "Adam/AdamW: decay rate of the first-moment estimate.");
  optimizer.real("beta2", &OptimizerConfig::beta2, 0.999, Range::at_least(0).below(1), "",
                 "Adam/AdamW: decay rate of the second-moment estimate.");
  optimizer.real("eps", &OptimizerConfig::eps, 1e-8, Range::greater_than(0), "",
                 "Adam/AdamW: added to the denominator for numerical stability.", {"epsilon"});
  optimizer.real("weight_decay", &OptimizerConfig::weight_decay, 0.0, Range::at_least(0), "",
                 "AdamW: decoupled decay; Adam and SGD: L2 term added to the gradient.");
  optimizer.real("max_grad_norm", &OptimizerConfig::max_grad_norm, 0.0, Range::at_least(0), "",
                 "Clip the global gradient norm (over every rank's shard) to this value before "
                 "the update; 0 = no clipping.",
                 {"gradient_clipping", "grad_clip", "clip_grad_norm"});
}

void add_scheduler(std::vector<SectionSpec>& schema) {
  auto scheduler =
      section(schema, "scheduler", &Config::scheduler, "Learning-rate schedule over train.steps.");
  scheduler.choice("type", &SchedulerConfig::type, kSchedulerTypeNames, SchedulerType::kConstant,
                   "constant; warmup (linear ramp, then constant); warmup_cosine and "
                   "warmup_linear (ramp, then decay to min_lr_ratio x optimizer.lr at the last "
                   "step).");
  scheduler.integer("warmup_steps", &SchedulerConfig::warmup_steps, 0, Range::at_least(0), "steps",
                    "Steps of linear warmup from 0 to optimizer.lr.",
                    {"warmup_num_steps", "warmup"});
  scheduler.real("min_lr_ratio", &SchedulerConfig::min_lr_ratio, 0.0, Range::at_least(0).at_most(1),
                 "", "Where the decaying schedules end, as a fraction of optimizer.lr.",
                 {"min_lr", "warmup_min_lr"});
}

void add_precision_zero_runtime(std::vector<SectionSpec>& schema) {
  auto precision = section(schema, "precision", &Config::precision, "Number formats.");
  precision.choice("dtype", &PrecisionConfig::dtype, kPrecisionDTypeNames, PrecisionDType::kFp32,
                   "Compute dtype of parameters and activations; master weights and "
                   "optimizer states stay fp32. fp16 runs on the CPU only (on CUDA use "
                   "bf16 or fp32).");
  precision
      .choice("grad_dtype", &PrecisionConfig::grad_dtype, kGradDTypeNames, GradDType::kAuto,
              "Dtype of the standing gradients (full buffers and shards). \"compute\": "
              "precision.dtype, as DeepSpeed keeps them (ZeRO's 2 bytes per gradient); "
              "\"fp32\": 2 more bytes per standing gradient element, no rounding of "
              "accumulated gradients; \"auto\": compute for bf16, fp32 for fp16 (whose "
              "loss-scaled gradient sums would overflow fp16). Backward always writes fp32.")
      .aliases = {"grad_accum_dtype"};
  precision.real("initial_loss_scale", &PrecisionConfig::initial_loss_scale, 65536.0,
                 Range::greater_than(0), "", "fp16: loss scale at the first step.",
                 {"initial_scale_power", "loss_scale"});
  precision.integer("loss_scale_growth_interval", &PrecisionConfig::loss_scale_growth_interval,
                    1000, Range::at_least(1), "steps",
                    "fp16: clean steps after which the loss scale doubles.", {"loss_scale_window"});
  precision.real("loss_scale_backoff", &PrecisionConfig::loss_scale_backoff, 0.5,
                 Range::greater_than(0).below(1), "",
                 "fp16: factor applied to the loss scale after an overflow (the step is skipped).");
  precision.real("min_loss_scale", &PrecisionConfig::min_loss_scale, 1.0, Range::greater_than(0),
                 "", "fp16: an overflow at this scale stops the run with an error.");

  auto zero = section(schema, "zero", &Config::zero, "ZeRO partitioning and communication.");
  zero.integer("stage", &ZeroConfig::stage, 0, Range::between(0, 3), "",
               "0 = DDP, 1 = shard optimizer state, 2 = + gradients, 3 = + parameters.");
  zero.size("reduce_bucket_size", &ZeroConfig::reduce_bucket_size_bytes, "25MiB",
            Range::at_least(1024), "Gradient bytes gathered into one all-reduce / reduce-scatter.");
  zero.integer("prefetch_blocks", &ZeroConfig::prefetch_blocks, 1, Range::between(0, 64), "blocks",
               "Stage 3: blocks whose parameters are all-gathered ahead of the block being "
               "computed, so communication overlaps compute.",
               {"prefetch_bucket_size", "stage3_prefetch_bucket_size"});
  zero.size("param_persistence_threshold", &ZeroConfig::param_persistence_threshold_bytes, "0",
            Range::at_least(0),
            "Stage 3: blocks with at most this many parameter bytes stay gathered for the "
            "whole step instead of being released after use; 0 = release every block.");
  zero.size("max_live_parameters", &ZeroConfig::max_live_parameters_bytes, "1GiB",
            Range::at_least(0),
            "Stage 3: prefetching stops while gathered parameters would exceed this many "
            "bytes (the block being computed is always gathered).");
  zero.integer("shard_group_size", &ZeroConfig::shard_group_size, 0, Range::at_least(0), "ranks",
               "Stages 1-3, hybrid sharding (HSDP, MiCS): shard model states inside groups of "
               "this many contiguous ranks (a node when it equals the ranks per node) and "
               "replicate them across the groups: gradients are reduce-scattered inside the "
               "group, then the shard is all-reduced across the groups; parameter all-gathers "
               "stay inside the group. Must divide the world size; 0 = the world size (one "
               "group). Stage 0 replicates everything: there it must be 0 or the world size.",
               {"mics_shard_size"});
  zero.integer("hpz_partition_size", &ZeroConfig::hpz_partition_size, 0, Range::at_least(0),
               "ranks",
               "Stage 3, hierarchical partitioning (ZeRO++ hpZ): besides its shard, every rank "
               "keeps a secondary shard of the parameters in the compute dtype, cut over "
               "groups of this many contiguous ranks (a node when it equals the ranks per "
               "node), filled from the forward's all-gathers; the backward's all-gathers (and "
               "later micro-batches' forwards) read it and stay inside the group. Costs the "
               "parameters' compute-dtype bytes / this size per rank. Must divide "
               "zero.shard_group_size (or the world size); 0 or 1 = none, and the shard "
               "group's own size keeps nothing twice.",
               {"zero_hpz_partition_size"});
  zero.boolean("quantized_weights", &ZeroConfig::quantized_weights, false,
               "Stage 3, quantized weight all-gathers (ZeRO++ qwZ): every all-gather of "
               "parameters from the primary shards sends each rank's slice as int8 blocks with "
               "one f32 scale per zero.quantization_block elements (about 1/4 of fp32's bytes, "
               "1/2 of bf16's) and every rank computes with the dequantized values, within half "
               "a step of each block; master weights, optimizer states and gradients stay "
               "exact. Gathers inside an hpZ group copy the secondary shard, which holds the "
               "dequantized values, so forward and backward see the same weights.")
      .aliases = {"zero_quantized_weights"};
  zero.integer("quantization_block", &ZeroConfig::quantization_block, 2048,
               Range::between(1, 1 << 24), "elements",
               "Elements that share one f32 scale in a quantized collective (any count of "
               "elements works: a slice's last block is short).");
  zero.boolean("quantized_gradients", &ZeroConfig::quantized_gradients, false,
               "Stages 2-3, quantized gradient reduce-scatters (ZeRO++ qgZ): each block's "
               "gradients are quantized (zero.quantized_gradients_format, one f32 scale per "
               "zero.quantization_block elements), exchanged with an all-to-all among the "
               "ranks of a node, summed in f32, quantized again and exchanged with an "
               "all-to-all across the nodes, where each rank sums its slice in f32: the link "
               "between nodes carries 1/8 (int4) of an fp32 reduce-scatter's bytes divided by "
               "the ranks per node. Parameters, master weights and optimizer states stay "
               "exact.")
      .aliases = {"zero_quantized_gradients"};
  zero.choice("quantized_gradients_format", &ZeroConfig::quantized_gradients_format,
              kQuantizedFormatNames, QuantizedFormat::kInt4,
              "zero.quantized_gradients: the integers gradients travel as; int4 (7 levels "
              "each side of 0) or int8 (127).");
  zero.boolean("quantized_gradients_error_feedback",
               &ZeroConfig::quantized_gradients_error_feedback, false,
               "zero.quantized_gradients: each rank keeps the rounding error of both "
               "quantizations (f32, the model's padded parameter count times 1 + 1 / ranks per "
               "node, counted as gradients) and adds it to what it quantizes next, so rounding "
               "errors cancel over steps instead of adding up (error feedback, as in LoCo).");

  auto offload = section(schema, "offload", &Config::offload,
                         "Model states kept off the device (ZeRO-Offload, ZeRO-Infinity).");
  offload.choice("optimizer", &OffloadConfig::optimizer, kOptimizerOffloadNames,
                 OffloadTarget::kNone,
                 "Stages 1-3: where this rank's fp32 master weights and optimizer states live; "
                 "cpu = host memory, updated there by the CPU optimizer (the gradient shard "
                 "goes over, the compute-dtype parameters come back); nvme = the optimizer "
                 "states in files under offload.nvme_path, read and written around each "
                 "sub-group's update, the fp32 masters in host memory.");
  offload.choice("params", &OffloadConfig::params, kParameterOffloadNames, OffloadTarget::kNone,
                 "Stage 3 with offload.optimizer: where the parameter shard lives; cpu = host "
                 "memory (the offloaded optimizer's compute-dtype copy), each block's slices "
                 "copied to the device just before its all-gather.");
  offload.integer("sub_group_size", &OffloadConfig::sub_group_size, 16777216, Range::at_least(1024),
                  "elements",
                  "Offloaded optimizer: elements the CPU optimizer updates as one task (and "
                  "copies back as one transfer; with nvme, the states read and written as "
                  "one transfer each, at most 3 sub-groups of them in host memory).");
  offload.integer("cpu_threads", &OffloadConfig::cpu_threads, 0, Range::between(0, 256), "threads",
                  "Offloaded optimizer: CPU threads that update sub-groups; 0 = "
                  "cores / local ranks.");
  offload.path("nvme_path", &OffloadConfig::nvme_path, "", Emptiness::kMayBeEmpty,
               "offload.optimizer = \"nvme\": the directory of the optimizer-state files, "
               "one per rank, on a filesystem with direct I/O (ext4, xfs); removed at exit.");
  offload.boolean(
      "overlap_step", &OffloadConfig::overlap_step, false,
      "Offloaded optimizer: run iteration t's update during iteration t+1's "
      "forward and backward: the parameters the forward sees are one update behind (one "
      "step of staleness, ZeRO-Offload's delayed parameter update). offload.optimizer "
      "= \"cpu\" only.");

  auto runtime = section(schema, "runtime", &Config::runtime, "Devices, threads and timeouts.");
  runtime.choice("device", &RuntimeConfig::device, kDeviceKindNames, DeviceKind::kCpu,
                 "Where tensors live and kernels run: the CPU, or one NVIDIA GPU per rank.");
  runtime.integer("device_index", &RuntimeConfig::device_index, -1, Range::at_least(-1), "GPU",
                  "runtime.device = \"cuda\": the GPU ordinal of this rank; -1 = LOCAL_RANK "
                  "(one GPU per local rank, as torchrun and srun set it).");
  runtime.size("device_memory_limit", &RuntimeConfig::device_memory_limit_bytes, "0",
               Range::at_least(0), "Cap on tracked device memory per rank; 0 = unlimited.");
  runtime.integer("blas_threads", &RuntimeConfig::blas_threads, 0, Range::at_least(0), "threads",
                  "BLAS threads per rank; 0 = cores / local ranks.");
  runtime.real("comm_timeout_s", &RuntimeConfig::comm_timeout_s, 300, Range::greater_than(0),
               "seconds", "Bound on every collective and store wait.");
  runtime.boolean("memory_profile", &RuntimeConfig::memory_profile, false,
                  "Memory-profiling mode: every rank records each allocation and free (time, "
                  "step, phase, category, bytes, name) from initialization through "
                  "runtime.memory_profile_steps steps; run.dir gets memory/rank-K.json and "
                  "memory.html, with the estimator's prediction drawn against it.");
  runtime.integer("memory_profile_steps", &RuntimeConfig::memory_profile_steps, 2,
                  Range::at_least(1), "steps",
                  "Steps the memory profile covers, after initialization.");
  runtime.choice("attention", &RuntimeConfig::attention, kAttentionNames, AttentionKind::kAuto,
                 "runtime.device = \"cuda\": the attention kernels. rows = batched cuBLAS "
                 "GEMMs and row kernels in fp32 over the whole (B, heads, T, T) score matrix; "
                 "cudnn = cuDNN's fused flash attention (SDPA), bf16 only, in a build that "
                 "found cuDNN 9's headers and its frontend (precision.dtype = \"fp32\" keeps "
                 "rows); libcudnn.so.9 is opened at start and the training step's graphs built "
                 "then: a graph cuDNN refuses (or no libcudnn.so.9) refuses the run, naming "
                 "cuDNN's reason; evaluation and sampling shapes it refuses later run on rows, "
                 "with a warning; with model.dropout > 0 (whose masks cuDNN cannot draw) it is "
                 "refused. auto = rows until cudnn has passed the GPU check (then: cudnn where "
                 "that start-up check passes for bf16 without model.dropout, else rows with one "
                 "warning).");

  auto comm = section(schema, "comm", &Config::comm, "Collective communication.");
  comm.choice("backend", &CommConfig::backend, kCommBackendNames, CommBackendKind::kAuto,
              "The collectives library: nccl (CUDA tensors, one GPU per rank), gloo (CPU "
              "tensors, or CUDA tensors staged through pinned host memory, so ranks may share "
              "a GPU), or auto: nccl on CUDA, gloo on the CPU. libnccl.so.2 is opened when a "
              "rank starts: without it, nccl is refused naming it, and auto uses gloo with a "
              "warning.");
  comm.boolean("dump_on_exit", &CommConfig::dump_on_exit, false,
               "Every rank writes its flight record (its last 2048 collectives: group, "
               "sequence number, kind, size, dtype, the trainer's step and phase, times, state) "
               "to run.dir/flight/rank-N.json as it leaves, however the run ends. Without it "
               "a record is written when a collective fails or times out, on SIGTERM or SIGINT "
               "(as the rank stops) and on SIGUSR1 (the run goes on; `zerotrain launch` "
               "forwards its own SIGUSR1 to every rank and prints `zerotrain diagnose`'s "
               "verdict).");
  comm.choice("check_collectives", &CommConfig::check_collectives, kCollectiveCheckNames,
              CollectiveCheckKind::kOff,
              "The ranks compare the collectives they issue (kind, element count, dtype, root, "
              "step, per communicator), so a rank that took another branch or sized a bucket "
              "differently stops the run at once naming the group, the ranks and what each "
              "issued, instead of hanging or reducing mismatched buffers. step = the ops of "
              "each step are compared at its end (a few words per communicator and step); "
              "every = each op is compared before its data moves (as PyTorch's "
              "TORCH_DISTRIBUTED_DEBUG=DETAIL): each op first waits for those queued before it, "
              "so communication no longer overlaps; for debugging. off = no check.");
}

void add_checkpoint(std::vector<SectionSpec>& schema) {
  auto checkpoint = section(schema, "checkpoint", &Config::checkpoint,
                            "Sharded checkpoints: saving, keeping and resuming.");
  checkpoint.path("dir", &CheckpointConfig::dir, "", Emptiness::kMayBeEmpty,
                  "Directory of the checkpoints (step-N/, one file per rank and a "
                  "manifest); empty means <run.dir>/checkpoints. With several nodes it must "
                  "be a filesystem every node shares.");
  checkpoint.integer("every_steps", &CheckpointConfig::every_steps, 0, Range::at_least(0), "steps",
                     "Save after every this many optimizer steps, and after the last one; 0 = "
                     "never save. Ranks copy their shards to host memory and write them in the "
                     "background while training goes on.",
                     {"save_interval", "save_steps"});
  checkpoint.integer("keep_last", &CheckpointConfig::keep_last, 0, Range::at_least(0),
                     "checkpoints",
                     "Complete checkpoints of this run to keep; its older ones are removed "
                     "after each save (another run's never). 0 = keep every one.",
                     {"save_total_limit"});
  checkpoint
      .path("resume", &CheckpointConfig::resume, "", Emptiness::kMayBeEmpty,
            "Where training starts: empty = from step 0, as a new run; \"latest\" = "
            "the newest complete checkpoint in checkpoint.dir of the run that "
            "run.dir/run_id names (from step 0 when there is none yet: a new run, refused "
            "as one when run.dir holds an earlier run's outputs unless run.overwrite); "
            "or the path of "
            "a checkpoint (its step-N directory), whose run this run continues. A "
            "checkpoint loads at any world size, ZeRO stage and offload setting.")
      .path_keywords = {"latest"};
  checkpoint.path("init_from", &CheckpointConfig::init_from, "", Emptiness::kMayBeEmpty,
                  "Weights to start a new run from: a safetensors file, a sharded set's "
                  "model.safetensors.index.json, or a directory holding either, under "
                  "Hugging Face's names or ours (`zerotrain checkpoint export` without "
                  "--names hf; told apart by the tensors present). GPT-2 names (model.type = "
                  "\"gpt\"): Conv1D weights are "
                  "transposed, a smaller vocabulary is padded with zero rows (which the "
                  "loss and sampling leave out: config.json's vocab_size is the data's, "
                  "model.data_vocab_size), a longer position table is cut to "
                  "model.seq_len. Llama names (model.type = "
                  "\"llama\"): q/k/v_proj stack into the fused qkv, gate/up_proj into the "
                  "SwiGLU fc. A missing, extra or mis-shaped tensor is refused; a "
                  "config.json beside the weights is checked against model.* (shape, "
                  "rope_theta, norm_eps, the tie; any rope_scaling refused). Each rank reads "
                  "only its own shard. Optimizer states start at zero. A resume "
                  "(checkpoint.resume) takes precedence.");
}

std::vector<SectionSpec> build_schema() {
  std::vector<SectionSpec> schema;
  add_run_model_data(schema);
  add_train_optimizer(schema);
  add_scheduler(schema);
  add_precision_zero_runtime(schema);
  add_checkpoint(schema);
  return schema;
}

constexpr std::array<std::string_view, 1> kPlannedSections{"profile"};

constexpr std::array<RetiredKey, 1> kRetiredKeys{{
    {"train.eval_batches",
     "the validation set is now train.eval_windows windows over all ranks, the same whatever "
     "the batch split; set train.eval_windows = eval_batches x micro_batch_size x world size "
     "for as many windows as before (64 for configs/tiny.toml's 4 x 8 x 2)"},
}};

}  // namespace

const std::vector<SectionSpec>& config_schema() {
  static const std::vector<SectionSpec> schema = build_schema();
  return schema;
}

std::span<const std::string_view> planned_config_sections() { return kPlannedSections; }

std::span<const RetiredKey> retired_config_keys() { return kRetiredKeys; }

const RetiredKey* find_retired_config_key(std::string_view section, std::string_view name) {
  for (const RetiredKey& key : kRetiredKeys) {
    const std::string_view full = key.full_name;
    if (full.size() == section.size() + 1 + name.size() && full.starts_with(section) &&
        full[section.size()] == '.' && full.ends_with(name)) {
      return &key;
    }
  }
  return nullptr;
}

}  // namespace zt
