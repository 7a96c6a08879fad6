// docs/CONFIG.md, generated from the schema so the reference cannot drift from the code.
#pragma once

#include <string>

namespace zt {

// The full text of docs/CONFIG.md: intro, how sizes and --set work, one table per section.
// Regenerate the file with `zerotrain config docs > docs/CONFIG.md`.
std::string config_reference_markdown();

}  // namespace zt
