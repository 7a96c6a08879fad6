// `zerotrain checkpoint inspect PATH` and `zerotrain checkpoint export PATH OUT.safetensors
// [--dtype fp32|bf16|fp16] [--names zerotrain|hf] [--overwrite]`: what a checkpoint holds,
// verified, and its full weights as one file.
#include <cstdio>
#include <filesystem>
#include <string>

#include "apps/commands.h"
#include "core/config/byte_size.h"
#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/hf_export.h"
#include "runtime/checkpoint/safetensors_export.h"

namespace zt::apps {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    R"(usage: zerotrain checkpoint inspect PATH
       zerotrain checkpoint export PATH OUT.safetensors [--dtype fp32|bf16|fp16]
                                   [--names zerotrain|hf] [--overwrite]

PATH is a checkpoint (a step-N directory with a manifest.toml), or a checkpoint.dir, which
means its newest complete checkpoint.
inspect: what the checkpoint holds (step, world size, stage, model, files), every file
         verified against the manifest's CRC-32C; exit 1 names any file that differs.
export:  the full fp32 master weights as one safetensors file, with the model's parameter
         names (a tied parameter once, under the name it uses), which
         checkpoint.init_from reads back; --dtype bf16 or fp16 halves it
         (rounded to nearest even; fp16 refuses a weight beyond its range, 65504).
         OUT is written to a temp file beside it and moved into place only when
         complete, never through a symbolic link and never inside the checkpoint it
         reads. An OUT (or, with --names hf, a config.json beside it) that exists is
         refused before anything is written; --overwrite replaces them, and a failure
         part way leaves the earlier files as they were.
         --names hf: Hugging Face's names and layouts instead (GPT-2: wte.weight,
         transformer.h.N.attn.c_attn.weight, ... with Conv1D weights transposed; Llama:
         model.layers.N.self_attn.q_proj.weight, ... with the fused qkv and SwiGLU fc
         split back by rows; a tied head left out) and a config.json beside OUT, for
         transformers and for checkpoint.init_from (bos_token_id and eos_token_id: the
         run's data.tokenizer's begin- and end-of-text ids, null without one). The model's vocabulary rows are kept
         as they are (a padded 50304 stays 50304).

exit status: 0 success, 1 damaged checkpoint or I/O failure, 2 usage error
)";

int inspect(const std::string& given) {
  const checkpoint::CheckpointReader reader(resolve_checkpoint_path(given));
  const checkpoint::Manifest& m = reader.manifest();
  std::printf("checkpoint %s\n", reader.path().string().c_str());
  std::printf("  step %lld (%lld optimizer updates applied)",
              static_cast<long long>(m.trainer.step),
              static_cast<long long>(m.trainer.applied_steps));
  if (m.trainer.loss_scale) {
    std::printf(", fp16 loss scale %g after %lld clean steps", *m.trainer.loss_scale,
                static_cast<long long>(m.trainer.loss_scale_clean_steps));
  }
  std::printf(
      "\n  saved by %d rank%s at zero.stage %d, precision %s, optimizer %s "
      "(offload.optimizer %s)\n",
      m.world_size, m.world_size == 1 ? "" : "s", m.zero_stage, m.precision.c_str(),
      m.optimizer.c_str(), m.offload.c_str());
  std::string names;
  for (const std::string& name : m.state_names) names += (names.empty() ? "" : ", ") + name;
  std::printf("  model: %zu parameters, %lld elements; state tensors: %s\n", m.parameters.size(),
              static_cast<long long>(m.numel), names.c_str());
  std::printf("  global batch %lld samples, run.seed %lld\n",
              static_cast<long long>(m.global_batch_size), static_cast<long long>(m.seed));
  std::printf("  parameters:\n");
  for (const checkpoint::ManifestParameter& p : m.parameters) {
    std::printf("    %-40s %-16s%s%s\n", p.name.c_str(), p.shape_text().c_str(),
                p.tied_to.empty() ? "" : " tied to ", p.tied_to.c_str());
  }
  std::printf("  files:\n");
  std::string damaged;
  for (const checkpoint::ManifestFile& f : m.files) {
    const int rank = f.rank;
    std::string status = "ok";
    try {
      reader.verify(std::span<const int>(&rank, 1));
    } catch (const Error& e) {
      status = "DAMAGED";
      damaged += std::string("\n  ") + e.what();
    }
    std::printf("    %s  %12llu bytes  crc32c %08x  %s\n", f.name.c_str(),
                static_cast<unsigned long long>(f.bytes), f.crc32c, status.c_str());
  }
  std::fflush(stdout);
  if (!damaged.empty())
    throw Error("checkpoint " + reader.path().string() + " is damaged:" + damaged);
  std::printf("  every file matches the manifest's checksum\n");
  return 0;
}

int export_weights(const Args& args) {
  std::string dtype = "fp32";
  std::string names = "zerotrain";
  bool overwrite = false;
  std::vector<std::string> positional;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--overwrite") {
      overwrite = true;
    } else if (args[i] == "--names") {
      if (i + 1 >= args.size()) throw UsageError("--names needs zerotrain or hf");
      names = args[++i];
    } else if (args[i].rfind("--names=", 0) == 0) {
      names = args[i].substr(8);
    } else if (args[i] == "--dtype") {
      if (i + 1 >= args.size()) throw UsageError("--dtype needs fp32, bf16 or fp16");
      dtype = args[++i];
    } else if (args[i].rfind("--dtype=", 0) == 0) {
      dtype = args[i].substr(8);
    } else if (args[i].rfind("--", 0) == 0) {
      throw UsageError("checkpoint export: unknown option '" + args[i] + "'");
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2) {
    throw UsageError(
        "checkpoint export needs PATH and OUT.safetensors (see `zerotrain checkpoint --help`)");
  }
  if (dtype != "fp32" && dtype != "bf16" && dtype != "fp16") {
    throw UsageError("--dtype: expected fp32, bf16 or fp16, got '" + dtype + "'");
  }
  if (names != "zerotrain" && names != "hf") {
    throw UsageError("--names: expected zerotrain or hf, got '" + names + "'");
  }
  const checkpoint::CheckpointReader reader(resolve_checkpoint_path(positional[0]));
  const checkpoint::ExportDType export_dtype = dtype == "fp32"   ? checkpoint::ExportDType::kF32
                                               : dtype == "bf16" ? checkpoint::ExportDType::kBf16
                                                                 : checkpoint::ExportDType::kF16;
  const data::ExistingOutput existing =
      overwrite ? data::ExistingOutput::kReplace : data::ExistingOutput::kRefuse;
  const checkpoint::ExportSummary summary =
      names == "hf"
          ? checkpoint::export_hf_safetensors(reader, positional[1], export_dtype, existing)
          : checkpoint::export_safetensors(reader, positional[1], export_dtype, existing);
  std::printf("wrote %s: %lld tensors%s, %lld parameters in %s, %s (step %lld)\n",
              positional[1].c_str(), static_cast<long long>(summary.tensors),
              names == "hf" ? " under Hugging Face names, and config.json beside it" : "",
              static_cast<long long>(summary.parameters), dtype.c_str(),
              format_approximate_bytes(static_cast<std::int64_t>(summary.bytes)).c_str(),
              static_cast<long long>(reader.manifest().trainer.step));
  return 0;
}

}  // namespace

fs::path resolve_checkpoint_path(const std::string& given) {
  const fs::path path = given;
  std::error_code ec;
  if (fs::exists(path / std::string(checkpoint::kManifestName), ec)) return path;
  const checkpoint::CheckpointListing listing = checkpoint::list_checkpoints(path);
  if (listing.complete.empty()) return path;  // the reader says what is wrong with it
  std::fprintf(stderr, "zerotrain: %s is a checkpoint.dir; using its newest checkpoint %s\n",
               given.c_str(), listing.complete.back().second.string().c_str());
  return listing.complete.back().second;
}

int checkpoint_command(const Args& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  for (const std::string& arg : args) {  // `checkpoint export --help` too
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  if (args[0] == "inspect") {
    if (args.size() != 2) throw UsageError("checkpoint inspect needs exactly one PATH");
    return inspect(args[1]);
  }
  if (args[0] == "export") return export_weights(args);
  throw UsageError("checkpoint: unknown subcommand '" + args[0] + "' (inspect, export)");
}

}  // namespace zt::apps
