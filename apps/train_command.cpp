// `zerotrain train CONFIG [--set section.key=value]...`
#include "apps/commands.h"
#include "core/config/config_loader.h"
#include "runtime/engine/run_training.h"

namespace zt::apps {

int train_command(const Args& args) {
  const ConfigArgs config_args = parse_config_args(args, 0);
  const Config config = load_config_file(config_args.path, config_args.overrides);
  return engine::run_training(config);
}

}  // namespace zt::apps
