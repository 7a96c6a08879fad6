// The tiny Hugging Face Llama weights of tests/fixtures/hf_llama (make_fixture.py) and what a
// model loaded from them must hold, worked out here by plain loops over the files' tensors
// (Llama's names spelled out, q/k/v and gate/up stacked by rows as they are, the vocabulary
// padded with zero rows), independently of the loader's name tables.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/hf_weights.h"
#include "support/test_paths.h"

namespace zt::testing {

// "" for the tied llama-tiny model (F16, "model." prefix, config.json), "untied_sharded" for
// tiny_llama_overrides' model (F32, 13 vocabulary rows, a separate head, config.json).
inline std::filesystem::path hf_llama_fixture(const std::string& which = "") {
  const std::filesystem::path root =
      std::filesystem::path(source_dir()) / "tests/fixtures/hf_llama";
  return which.empty() ? root : root / which;
}

// configs/llama-tiny.toml's model, which the top-level fixture was made for.
inline std::vector<std::string> llama_tiny_model_overrides() {
  return {"model.type=llama",    "model.n_layer=2",          "model.n_head=4",
          "model.n_kv_head=2",   "model.d_model=64",         "model.ffn_dim=128",
          "model.vocab_size=32", "model.seq_len=32",         "model.rope_theta=10000",
          "model.norm_eps=1e-5", "model.tie_embeddings=true"};
}

// Llama's names of our parameter `name`, stacked by rows.
inline std::vector<std::string> llama_names_of(const std::string& name) {
  if (name == "embedding.wte") return {"embed_tokens.weight"};
  if (name == "head.rms_f.weight") return {"norm.weight"};
  if (name == "head.lm_head.weight") return {"lm_head.weight"};
  // block.N.<rest>
  const std::size_t dot = name.find('.', 6);
  const std::string layer = "layers." + name.substr(6, dot - 6) + ".";
  const std::string rest = name.substr(dot + 1);
  if (rest == "rms_1.weight") return {layer + "input_layernorm.weight"};
  if (rest == "rms_2.weight") return {layer + "post_attention_layernorm.weight"};
  if (rest == "attn.qkv.weight") {
    return {layer + "self_attn.q_proj.weight", layer + "self_attn.k_proj.weight",
            layer + "self_attn.v_proj.weight"};
  }
  if (rest == "attn.proj.weight") return {layer + "self_attn.o_proj.weight"};
  if (rest == "mlp.fc.weight")
    return {layer + "mlp.gate_proj.weight", layer + "mlp.up_proj.weight"};
  if (rest == "mlp.proj.weight") return {layer + "mlp.down_proj.weight"};
  ADD_FAILURE() << "no Llama name for " << name;
  return {};
}

// The model's unpadded parameters (describe_parameters' order) as `weights` should fill them.
inline std::vector<float> expected_from_hf_llama(
    const checkpoint::HfWeights& weights, const std::vector<checkpoint::ManifestParameter>& ps,
    std::int64_t numel) {
  std::vector<float> out(static_cast<std::size_t>(numel), -99.0f);
  for (const checkpoint::ManifestParameter& p : ps) {
    if (!p.tied_to.empty()) continue;
    // The parts' values one after the other: their rows stacked.
    std::vector<float> stacked;
    for (const std::string& part : llama_names_of(p.name)) {
      const checkpoint::HfTensorRef* ref = weights.find(part);
      if (ref == nullptr) ref = weights.find("model." + part);
      if (ref == nullptr) {
        ADD_FAILURE() << "the fixture has no " << part;
        continue;
      }
      std::vector<float> values(static_cast<std::size_t>(ref->tensor->numel()));
      ref->file->read_f32(*ref->tensor, 0, ref->tensor->numel(), values.data());
      stacked.insert(stacked.end(), values.begin(), values.end());
    }
    stacked.resize(static_cast<std::size_t>(p.numel()), 0.0f);  // padding rows
    std::copy(stacked.begin(), stacked.end(), out.begin() + p.offset);
  }
  return out;
}

}  // namespace zt::testing
