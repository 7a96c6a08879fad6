// Models: an nn::Model is an ordered list of blocks, each an nn::Module with explicit forward
// and backward. A block is the unit ZeRO stage 3 gathers and releases and activation
// checkpointing recomputes, so a model of several blocks shards and overlaps better than one
// of a single block. Build blocks from the layers below or write a Module of your own; or
// take a whole decoder: make_gpt (GPT-2: LayerNorm, learned positions, GELU MLP) or
// make_llama (RMSNorm, rotary positions, SwiGLU MLP, grouped-query attention).
#pragma once

#include "nn/layers/causal_self_attention.h"
#include "nn/layers/embedding.h"
#include "nn/layers/gelu.h"
#include "nn/layers/grouped_query_attention.h"
#include "nn/layers/layer_norm.h"
#include "nn/layers/linear.h"
#include "nn/layers/relu.h"
#include "nn/layers/residual.h"
#include "nn/layers/rms_norm.h"
#include "nn/layers/sequential.h"
#include "nn/layers/swiglu_mlp.h"
#include "nn/model.h"
#include "nn/models/gpt.h"
#include "nn/models/llama.h"
#include "nn/models/mlp.h"
#include "nn/module.h"
#include "zerotrain/tensor.h"

namespace zerotrain {

namespace nn = zt::nn;

}  // namespace zerotrain
