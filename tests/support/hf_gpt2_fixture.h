// The tiny Hugging Face GPT-2 weights of tests/fixtures/hf_gpt2 (make_fixture.py) and what a
// model loaded from them must hold, worked out here by plain loops over the file's tensors
// (GPT-2's names spelled out, Conv1D weights transposed, the vocabulary padded with zero
// rows, the positions cut to seq_len), independently of the loader's name tables.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/hf_weights.h"
#include "support/test_paths.h"

namespace zt::testing {

// The fixture's shape as --set overrides (tiny_gpt_overrides' model with the head tied or
// not); the files have 13 vocabulary rows and 10 positions.
inline std::filesystem::path hf_gpt2_fixture(const std::string& which) {
  return std::filesystem::path(source_dir()) / "tests/fixtures/hf_gpt2" / which;
}

// GPT-2's name of our parameter `name` and whether it is a Conv1D weight.
inline std::string gpt2_name_of(const std::string& name, bool& conv1d) {
  conv1d = false;
  if (name == "embedding.wte") return "wte.weight";
  if (name == "embedding.wpe") return "wpe.weight";
  if (name == "head.lm_head.weight") return "lm_head.weight";
  if (name.rfind("head.", 0) == 0) return name.substr(5);  // head.ln_f.* -> ln_f.*
  // block.N.<rest> -> h.N.<rest'>
  std::string hf = "h." + name.substr(6);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const std::size_t at = hf.find(from);
    if (at != std::string::npos) hf.replace(at, from.size(), to);
  };
  replace(".attn.qkv.", ".attn.c_attn.");
  replace(".attn.proj.", ".attn.c_proj.");
  replace(".mlp.fc.", ".mlp.c_fc.");
  replace(".mlp.proj.", ".mlp.c_proj.");
  conv1d = hf.find(".c_") != std::string::npos && hf.ends_with(".weight");
  return hf;
}

// The model's unpadded parameters (describe_parameters' order) as `weights` should fill them.
inline std::vector<float> expected_from_hf(const checkpoint::HfWeights& weights,
                                           const std::vector<checkpoint::ManifestParameter>& ps,
                                           std::int64_t numel) {
  std::vector<float> out(static_cast<std::size_t>(numel), -99.0f);
  for (const checkpoint::ManifestParameter& p : ps) {
    if (!p.tied_to.empty()) continue;
    bool conv1d = false;
    const std::string base = gpt2_name_of(p.name, conv1d);
    const checkpoint::HfTensorRef* ref = weights.find(base);
    if (ref == nullptr) ref = weights.find("transformer." + base);
    if (ref == nullptr) {
      ADD_FAILURE() << "the fixture has no " << base;
      continue;
    }
    std::vector<float> hf(static_cast<std::size_t>(ref->tensor->numel()));
    ref->file->read_f32(*ref->tensor, 0, ref->tensor->numel(), hf.data());
    const std::int64_t rows = p.shape[0];
    const std::int64_t cols = p.shape.size() > 1 ? p.shape[1] : 1;
    const std::int64_t hf_rows = ref->tensor->shape[0];
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        float value = 0.0f;  // a padding row
        if (conv1d) {
          value = hf[static_cast<std::size_t>(c * rows + r)];
        } else if (r < hf_rows) {
          value = hf[static_cast<std::size_t>(r * cols + c)];
        }
        out[static_cast<std::size_t>(p.offset + r * cols + c)] = value;
      }
    }
  }
  return out;
}

}  // namespace zt::testing
