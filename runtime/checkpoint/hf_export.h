// `zerotrain checkpoint export --names hf`: a checkpoint's full weights as one safetensors
// file under Hugging Face's names and layouts (Note [Hugging Face names]), so that
// transformers loads it and checkpoint.init_from of it gives the checkpoint's weights back
// bit for bit (fp32). The model's rows are kept: a vocabulary padded for speed (50304) stays
// padded, its extra rows as trained (zero when they never saw a gradient); a tied head is
// left out, as transformers saves it; a fused parameter (Llama's qkv, fc) is split by rows
// into its Hugging Face tensors. A config.json for the model (Note [Hugging Face config])
// is written beside the file; it is an output like the file, and an existing one is
// replaced or refused as the file is.
#pragma once

#include <filesystem>

#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/safetensors_export.h"

namespace zt::checkpoint {

// As export_safetensors (verified first, written atomically, never inside the checkpoint,
// an existing OUT or config.json replaced or refused as `existing` says, both checked before
// either is written), with the names of the model family of the checkpoint's model.type.
// Throws ConfigError for a model without Hugging Face names.
ExportSummary export_hf_safetensors(const CheckpointReader& reader,
                                    const std::filesystem::path& out, ExportDType dtype,
                                    data::ExistingOutput existing = data::ExistingOutput::kReplace);

}  // namespace zt::checkpoint
