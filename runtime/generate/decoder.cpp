// The decoder's forward: the model's blocks in order, what each saves for a backward dropped
// as soon as it is done (there is none), the last position's logits copied to the host.
#include "runtime/generate/decoder.h"

#include <cstddef>
#include <string>

#include "core/error.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::generate {

Decoder::Decoder(nn::Model& model, const ModelWeights& weights, DeviceContext& device,
                 std::int64_t max_len)
    : model_(model), weights_(weights), device_(device), max_len_(max_len), state_(1, max_len) {}

void Decoder::reset() { state_ = nn::DecodeState(1, max_len_); }

std::vector<float> Decoder::feed(std::span<const std::int32_t> tokens) {
  std::vector<float> logits = forward(tokens, &state_);
  state_.advance(static_cast<std::int64_t>(tokens.size()));
  return logits;
}

std::vector<float> Decoder::full_forward(std::span<const std::int32_t> tokens) {
  return forward(tokens, nullptr);
}

std::vector<float> Decoder::forward(std::span<const std::int32_t> tokens, nn::DecodeState* state) {
  const auto count = static_cast<std::int64_t>(tokens.size());
  const std::int64_t first = state ? state->position() : 0;
  if (count == 0 || first + count > max_len_) {
    throw Error("decoding " + std::to_string(count) + " token(s) at position " +
                std::to_string(first) + " of a model of " + std::to_string(max_len_) +
                " positions (model.seq_len)");
  }
  MemoryTracker& tracker = device_.tracker();
  const Tensor host_ids =
      Tensor::wrap(const_cast<std::int32_t*>(tokens.data()), Shape{1, count}, DType::kI32);
  model_.block(0).module->check_input(host_ids);
  Tensor x = Tensor::empty(host_ids.shape(), DType::kI32, tracker, MemoryCategory::kActivations);
  device_.ops().copy(host_ids, x);
  nn::SavedActivations saved;
  nn::ModuleContext ctx{device_, nn::kernel_backend_for(device_.device()), saved, state};
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    x = model_.block(b).module->forward(weights_.block(b), x, ctx);
    saved.clear();
  }
  // x: logits (1, T, V) in the compute dtype; the last row, widened on the host.
  const std::int64_t vocab = x.dim(2);
  const Tensor last = x.view((count - 1) * vocab, Shape{vocab});
  std::vector<std::byte> host_bytes(last.nbytes());
  device_.ops().copy(last, Tensor::wrap(host_bytes.data(), last.shape(), last.dtype()));
  device_.synchronize();
  std::vector<float> logits(static_cast<std::size_t>(vocab));
  convert_elements(host_bytes.data(), last.dtype(), logits.data(), DType::kF32, logits.size());
  return logits;
}

}  // namespace zt::generate
