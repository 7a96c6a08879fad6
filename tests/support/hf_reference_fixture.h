// The reference fixtures of tests/fixtures/hf_reference (make_reference.py): a tiny model made
// by Hugging Face transformers, and what transformers' forward gave for a fixed input: the
// input ids, the next-token targets, the logits and their mean cross-entropy.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/checkpoint/safetensors_file.h"
#include "support/test_paths.h"

namespace zt::testing {

// The folder of model `which` ("gpt2", "llama"): config.json, model.safetensors and
// reference.safetensors.
inline std::filesystem::path hf_reference_fixture(const std::string& which) {
  return std::filesystem::path(source_dir()) / "tests/fixtures/hf_reference" / which;
}

struct HfReference {
  std::int64_t batch = 0;
  std::int64_t seq_len = 0;
  std::int64_t vocab = 0;
  std::vector<std::int32_t> input_ids;   // (batch, seq_len)
  std::vector<std::int32_t> target_ids;  // (batch, seq_len): input_ids shifted by one
  std::vector<float> logits;             // (batch, seq_len, vocab)
  float loss = 0.0f;                     // mean cross-entropy of logits against target_ids
};

inline std::vector<float> read_reference_tensor(const checkpoint::SafetensorsFile& file,
                                                const std::string& name,
                                                std::vector<std::int64_t>* shape = nullptr) {
  const checkpoint::SafetensorsTensor* tensor = file.find(name);
  if (tensor == nullptr) {
    ADD_FAILURE() << file.path() << " has no tensor " << name;
    return {};
  }
  if (shape != nullptr) *shape = tensor->shape;
  std::vector<float> values(static_cast<std::size_t>(tensor->numel()));
  file.read_f32(*tensor, 0, tensor->numel(), values.data());
  return values;
}

// The ids are stored as F32 (small integers, exact) so that one reader reads every tensor.
inline std::vector<std::int32_t> as_ids(const std::vector<float>& values) {
  return {values.begin(), values.end()};
}

inline HfReference load_hf_reference(const std::string& which) {
  const checkpoint::SafetensorsFile file =
      checkpoint::SafetensorsFile::open(hf_reference_fixture(which) / "reference.safetensors");
  HfReference reference;
  std::vector<std::int64_t> shape;
  reference.logits = read_reference_tensor(file, "logits", &shape);
  if (shape.size() != 3) {
    ADD_FAILURE() << "the reference logits of " << which << " are not (B, T, V)";
    return reference;
  }
  reference.batch = shape[0];
  reference.seq_len = shape[1];
  reference.vocab = shape[2];
  reference.input_ids = as_ids(read_reference_tensor(file, "input_ids"));
  reference.target_ids = as_ids(read_reference_tensor(file, "target_ids"));
  const std::vector<float> loss = read_reference_tensor(file, "loss");
  if (loss.size() == 1) reference.loss = loss[0];
  return reference;
}

}  // namespace zt::testing
