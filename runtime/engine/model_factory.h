// Builds the model and the batch source a config describes.
#pragma once

#include <memory>

#include "core/config/config.h"
#include "data/batch.h"
#include "nn/model.h"

namespace zt::engine {

nn::Model make_model(const Config& config);
// The training samples: data.path's files (less what data.val_fraction holds out), or the
// built-in synthetic data. A language model's token ids are checked against (and the
// synthetic data draws from) data_vocabulary(config.model): pass a config through
// with_data_vocab_size (runtime/engine/data_vocabulary.h) to resolve it from data.tokenizer or
// checkpoint.init_from.
std::unique_ptr<data::BatchSource> make_batch_source(const Config& config);
// The validation samples train.eval_every measures: data.val_path's files, what
// data.val_fraction held out of data.path's (Note [Validation split]), or the synthetic
// data's held-out stream (Note [Held-out synthetic stream]). ConfigError naming the keys
// when the config gives none, or both.
std::unique_ptr<data::BatchSource> make_validation_source(const Config& config);
// ConfigError for validation keys that contradict each other or the data (both val_path and
// val_fraction, val_fraction without token files, val_path for the MLP, token files and
// eval_every without either).
void check_validation_keys(const Config& config);

}  // namespace zt::engine
