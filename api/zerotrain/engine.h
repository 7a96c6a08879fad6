// Engine: trains a model across the ranks of a job, ZeRO-sharded as its Config says. It owns
// everything between the model and the hardware: the rank environment (zerotrain launch,
// torchrun-style variables, Slurm, Open MPI; a single rank when none is set), the store the
// ranks meet on, the device and its communicators, the ZeRO strategy, precision and loss
// scaling, gradient accumulation, clipping, the learning-rate schedule, metrics.jsonl and
// memory.json in run.dir.
//
//   zerotrain::Engine engine(config, std::move(model), std::move(source));
//   engine.train();   // or: for (...) engine.step(batch);
//   engine.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/engine/step_metrics.h"
#include "runtime/engine/validation_outputs.h"
#include "runtime/generate/token_sampler.h"
#include "zerotrain/config.h"
#include "zerotrain/data.h"
#include "zerotrain/errors.h"
#include "zerotrain/loss.h"
#include "zerotrain/modules.h"
#include "zerotrain/tensor.h"

namespace zerotrain {

// One optimizer step as measured: step, loss (the global mean), lr, grad_norm, samples/s,
// tokens/s (NaN unless the targets are tokens), step_ms, loss_scale, skipped, bytes sent.
using StepMetrics = zt::engine::StepMetrics;
// What validation_loss shows of the model's outputs: windows [first_window, first_window +
// windows) of the validation set, each of window_shape ((seq_len, vocab_size) logits for a
// language model), f32, row-major, window after window.
using ValidationOutputs = zt::engine::ValidationOutputs;
using ValidationOutputSink = zt::engine::ValidationOutputSink;
// How generate() picks each new token: temperature 0 is greedy (the first id of the largest
// logit); above 0 a draw from softmax(logits / temperature) over the top_k most likely ids
// (0: every id of the data's vocabulary), from the seed's counter-based streams.
using SamplingOptions = zt::generate::SamplingOptions;

class Engine;

struct EngineOptions {
  // Rank 0 writes config.toml, metrics.jsonl and memory.json under run.dir.
  bool write_run_dir = true;
  // Rank 0 prints a progress line during train().
  bool show_progress = true;
  // The targets are tokens: metrics report tokens/s (a language model).
  bool targets_are_tokens = false;
  // checkpoint.resume loads weights to measure (validation_loss), not to train on: a
  // checkpoint saved with any global batch loads, though train() would then not continue
  // its data order. For evaluation only.
  bool resume_weights_only = false;
  // The Engine(config) constructor builds the config's data sources; false builds its model
  // alone, for a run that only generates: a Hugging Face model's vocabulary has no synthetic
  // corpus, and a checkpoint's training data may not be on this machine. train() and
  // validation_loss() then have no data to read.
  bool load_data = true;
  // Called on every rank after every optimizer step, train() and step() alike: log, or
  // evaluate (evaluate() is collective: call it on every rank at the same steps).
  std::function<void(Engine& engine, const StepMetrics& metrics)> on_step;
};

struct TrainSummary {
  std::vector<double> losses;  // the global mean loss of every step train() made
  std::vector<StepMetrics> metrics;
};

class Engine {
 public:
  // Joins the job, opens the rank's device and communicators, and shards `model` as
  // config.zero.stage says. `source` feeds train() (it may be null when every step comes
  // through step(batch)); `loss` null means softmax cross-entropy. Throws ConfigError for a
  // setting this build cannot run, Error for a model without parameters.
  Engine(const Config& config, nn::Model model, std::unique_ptr<BatchSource> source,
         std::unique_ptr<Loss> loss = nullptr, EngineOptions options = {});
  // The model and data the config describes: what `zerotrain train CONFIG` runs.
  explicit Engine(const Config& config, EngineOptions options = {});
  // Calls finish() unless it was called or an exception is unwinding (then the job's other
  // ranks see this one leave and stop with a message naming it).
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Trains from the step after the last one made to config.train.steps.
  TrainSummary train();
  // One optimizer step on this rank's share of the global batch: train.micro_batch_size ×
  // train.grad_accum_steps samples (split into micro-batches here). Collective.
  StepMetrics step(const Batch& batch);
  // This rank's share of global batch `step` (from 1) as train() would load it from
  // `source`, in batch_memory(): for a loop of your own with train()'s data order.
  Batch load_step_batch(const BatchSource& source, std::int64_t step);
  // The global mean loss on `batch` (the same number of samples on every rank) without
  // changing the model. Collective.
  double evaluate(const Batch& batch);
  // The validation loss train.eval_every logs: the global mean loss over the first
  // train.eval_windows samples of the config's validation data (data.val_path,
  // data.val_fraction or the synthetic stream), the same windows at every world size and
  // batch split. Collective. Error for an Engine built on a user's model, which has no
  // validation data, or a config with train.eval_every = 0 (no validation data is built).
  // `on_outputs`, when set, is called on each rank with the model's outputs for the windows
  // that rank evaluates (its even share, in micro-batches), before their loss: `zerotrain
  // eval --logits` writes them to a file.
  double validation_loss(const ValidationOutputSink& on_outputs = {});
  // New tokens after each of `prompts` (token ids, each prompt at least one, any lengths; at
  // most model.seq_len with its new tokens), decoded with the model as it is sharded (at
  // ZeRO stage 3 one block gathered at a time, so a model no rank could hold alone decodes):
  // one row of `new_tokens` ids per prompt, in order, the same on every rank. Collective:
  // every rank calls it with the same arguments. Rank 0 selects the tokens and broadcasts
  // them, drawing only ids of the data's vocabulary (model.data_vocab_size, data.tokenizer's
  // or init_from's, else model.vocab_size: a model of your own needs model.vocab_size set to
  // its logits' width; never a padded row). At temperature 0 each row is its prompt's greedy
  // continuation, as if it were decoded alone. Above 0, row r draws from its own stream keyed
  // by (seed, r), so its tokens depend on its prompt, the seed and r but not on the other
  // prompts (up to the last bits of the logits), and row 0 draws what the same prompt alone
  // draws with the same seed. Error for a model that is not a language model (logits over
  // token ids), an id outside the data's vocabulary, or a prompt that does not fit.
  std::vector<std::vector<std::int32_t>> generate(
      const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
      const SamplingOptions& sampling);
  // Writes memory.json (unless this run made no step: then an earlier run's is kept) and
  // leaves the job together with every rank. Collective; once.
  void finish();
  // Saves a sharded checkpoint of the state after steps_done() into checkpoint.dir
  // (<run.dir>/checkpoints by default) and commits it before returning, whatever
  // checkpoint.every_steps says: for a loop of your own, a planned stop or a preemption
  // notice. Collective. Returns the checkpoint's path (step-N). An Engine whose config has
  // checkpoint.resume = that path (or "latest") continues from it: steps_done() says where.
  std::string save_checkpoint();

  int rank() const;
  int world_size() const;
  int local_rank() const;
  std::int64_t steps_done() const;
  // The config as resolved (batch sizes filled in).
  const Config& config() const;
  const nn::Model& model() const;
  // Distinct parameters (a tied parameter counts once).
  std::int64_t parameter_count() const;
  // The full parameters in the model's order, gathered from their shards: the same on every
  // rank. Collective.
  std::vector<float> full_parameters();
  // This rank's device, and the tracker counting its bytes per category.
  DeviceContext& device();
  // Where to allocate the batches handed to step() and evaluate(): host memory a
  // BatchSource can write (the device's own tracker on the CPU; on a GPU a host tracker,
  // whose batches the engine copies over).
  MemoryTracker& batch_memory();
  // "peak 12.3 MiB (parameters ..., ...)" of the largest rank, after finish(), on rank 0
  // ("" when this run made no step).
  const std::string& memory_summary() const;
  // With runtime.memory_profile, after finish() on rank 0: the path of run.dir/memory.html
  // ("" otherwise).
  const std::string& memory_profile_page() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerotrain
