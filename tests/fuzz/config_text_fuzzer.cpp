// Fuzzes the config loader: TOML text plus --set overrides (after the first NUL byte, one
// per line). Bad input must be a ConfigError; a config that loads must write out as TOML
// that loads back to the same config, and its batch sizes must resolve or be refused.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/batch_size.h"
#include "core/config/config_loader.h"
#include "core/config/config_writer.h"
#include "core/error.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view text = input.substr(0, split);
  std::vector<std::string> overrides;
  if (split != std::string_view::npos) {
    std::string_view rest = input.substr(split + 1);
    while (!rest.empty()) {
      const std::size_t end = rest.find('\n');
      overrides.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  zt::Config config;
  if (!zt::fuzz::accepts<zt::ConfigError>(
          [&] { config = zt::parse_config_text(text, "fuzz.toml", overrides); })) {
    return 0;
  }
  const std::string written = zt::config_to_toml(config);
  zt::Config reread;
  if (!zt::fuzz::accepts<zt::ConfigError>(
          [&] { reread = zt::parse_config_text(written, "written.toml", {}); })) {
    zt::fuzz::fail("the written config does not load:", written.c_str());
  }
  reread.source = config.source;
  if (!(reread == config))
    zt::fuzz::fail("the written config reads back differently:", written.c_str());
  for (std::int64_t world = 1; world <= 4; ++world) {
    zt::fuzz::accepts<zt::ConfigError>([&] { zt::resolve_batch_sizes(config, world); });
  }
  return 0;
}
