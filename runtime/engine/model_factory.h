// Builds the model and the batch source a config describes.
#pragma once

#include <memory>

#include "core/config/config.h"
#include "data/batch.h"
#include "nn/model.h"

namespace zt::engine {

nn::Model make_model(const Config& config);
std::unique_ptr<data::BatchSource> make_batch_source(const Config& config);

}  // namespace zt::engine
