// Model and data selection from the config.
#include "runtime/engine/model_factory.h"

#include "core/error.h"
#include "nn/models/mlp.h"

namespace zt::engine {

nn::Model make_model(const Config& config) {
  switch (config.model.type) {
    case ModelType::kMlp:
      return nn::make_mlp({config.model.input_dim, config.model.hidden_dim,
                           config.model.num_classes});
  }
  throw InternalError("unknown model type");
}

std::unique_ptr<data::BatchSource> make_batch_source(const Config& config) {
  if (config.model.type == ModelType::kMlp) {
    if (!config.data.path.empty()) {
      throw ConfigError(config.source + ": data.path = \"" + config.data.path +
                        "\": model.type = \"mlp\" trains on the built-in synthetic "
                        "classification task; leave data.path empty");
    }
    return data::make_synthetic_classification_source(
        static_cast<std::uint64_t>(config.run.seed), config.model.input_dim,
        config.model.num_classes);
  }
  throw InternalError("no batch source for this model type");
}

}  // namespace zt::engine
