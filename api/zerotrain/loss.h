// Losses: what the engine minimizes, given the last block's output and the batch's targets
// (the mean over every target element of the global batch). Softmax cross-entropy is the
// default; mean squared error is built in; a Loss of your own plugs in the same way.
#pragma once

#include "nn/loss/loss.h"
#include "zerotrain/tensor.h"

namespace zerotrain {

using zt::nn::Loss;
using zt::nn::LossContext;
using zt::nn::LossResult;
using zt::nn::make_mean_squared_error_loss;
using zt::nn::make_softmax_cross_entropy_loss;

}  // namespace zerotrain
