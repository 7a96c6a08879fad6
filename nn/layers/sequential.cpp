// Sequential forward runs children first to last; backward last to first.
#include "nn/layers/sequential.h"

#include "core/error.h"

namespace zt::nn {

Sequential& Sequential::add(std::unique_ptr<Module> child) {
  const std::size_t first =
      first_parameter_.empty() ? 0 : first_parameter_.back() + parameter_count_.back();
  first_parameter_.push_back(first);
  parameter_count_.push_back(child->parameter_specs().size());
  children_.push_back(std::move(child));
  return *this;
}

std::vector<ParameterSpec> Sequential::parameter_specs() const {
  std::vector<ParameterSpec> specs;
  for (const auto& child : children_) {
    for (auto& spec : child->parameter_specs()) specs.push_back(std::move(spec));
  }
  return specs;
}

void Sequential::check_input(const Tensor& input) const {
  if (!children_.empty()) children_.front()->check_input(input);
}

Tensor Sequential::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(params.size() == first_parameter_.back() + parameter_count_.back(),
           "Sequential given the wrong number of parameters");
  Tensor x = input;
  for (std::size_t i = 0; i < children_.size(); ++i) {
    x = children_[i]->forward(params.subspan(first_parameter_[i], parameter_count_[i]), x, ctx);
  }
  return x;
}

Tensor Sequential::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                            ModuleContext& ctx) {
  Tensor dy = grad_output;
  for (std::size_t i = children_.size(); i-- > 0;) {
    dy = children_[i]->backward(params.subspan(first_parameter_[i], parameter_count_[i]),
                                grads.subspan(first_parameter_[i], parameter_count_[i]), dy, ctx);
  }
  return dy;
}

}  // namespace zt::nn
