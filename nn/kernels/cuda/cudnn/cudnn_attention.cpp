// cuDNN's fused flash attention through the cuDNN frontend (Note [cuDNN attention]): the
// forward and backward graphs, built once per AttentionGraphKey, and their execution on the
// compute stream with workspace from the context's tracker (Note [cuDNN attention workspace]).
#include "nn/kernels/cuda/cudnn/cudnn_attention.h"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "nn/kernels/cuda/cuda_check.h"
#include "nn/kernels/cuda/cudnn/cudnn_check.h"
#include "nn/kernels/cuda/cudnn/cudnn_library.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda {
namespace {

namespace fe = cudnn_frontend;
using TensorAttributes = std::shared_ptr<fe::graph::Tensor_attributes>;

// The graphs' tensors in the variant pack that binds them to addresses per call.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

// cuDNN 9 numbers its versions major * 10000 + minor * 100 + patch.
std::string version_name(std::size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

fe::DataType_t frontend_dtype(DType dtype) {
  if (dtype == DType::kBF16) return fe::DataType_t::BFLOAT16;
  if (dtype == DType::kF16) return fe::DataType_t::HALF;
  throw Error(std::string("the cuDNN attention runs on bf16 or f16 operands, not ") +
              std::string(dtype_name(dtype)));
}

// (B, heads, T, head_dim) in cuDNN's order, with the AttentionHeads' strides permuted to it.
std::vector<std::int64_t> dims_of(const AttentionHeads& heads) {
  return {heads.batch, heads.n_heads, heads.seq_len, heads.head_dim};
}
std::vector<std::int64_t> strides_of(const AttentionHeads& heads) {
  return {heads.strides.batch, heads.strides.head, heads.strides.seq, 1};
}
TensorAttributes input(fe::graph::Graph& graph, const char* name, Uid uid,
                       const AttentionHeads& heads) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim(dims_of(heads))
                          .set_stride(strides_of(heads)));
}
void bind_output(const TensorAttributes& tensor, Uid uid, const AttentionHeads& heads) {
  tensor->set_output(true).set_uid(uid).set_dim(dims_of(heads)).set_stride(strides_of(heads));
}
// lse (B, nh, T) f32 as cuDNN's stats (B, nh, T, 1).
std::vector<std::int64_t> stats_dims(const AttentionShape& shape) {
  return {shape.batch, shape.n_head, shape.seq_len, 1};
}
std::vector<std::int64_t> stats_strides(const AttentionShape& shape) {
  return {shape.n_head * shape.seq_len, shape.seq_len, 1, 1};
}

// The address of head 0 of position 0 of batch row 0.
void* address_of(const AttentionHeads& heads) {
  return static_cast<char*>(heads.base.data()) +
         heads.strides.offset * static_cast<std::int64_t>(dtype_size(heads.base.dtype()));
}

std::string describe(const AttentionShape& shape, DType dtype, bool backward) {
  return std::string("causal attention ") + (backward ? "backward" : "forward") + ", B " +
         std::to_string(shape.batch) + ", T " + std::to_string(shape.seq_len) + ", " +
         std::to_string(shape.n_head) + " query / " + std::to_string(shape.n_kv_head) +
         " kv heads of " + std::to_string(shape.head_dim) + ", " + std::string(dtype_name(dtype));
}

}  // namespace

std::string cudnn_versions() {
  const std::string built = "cuDNN " + version_name(CUDNN_VERSION) + " at build, ";
  // The frontend's version query goes through the opened library (cudnn_library.h).
  if (const std::optional<std::string> missing = cudnn_library_missing()) {
    return built + std::string(kCudnnLibrary) + " missing at run time (" + *missing + ")";
  }
  return built + version_name(fe::detail::get_backend_version()) + " at run time";
}

struct CudnnAttention::Handle {
  cudnnHandle_t native = nullptr;
  explicit Handle(int device_index) {
    // The handle belongs to the GPU that is current when it is created.
    ZT_CUDA_CHECK(cudaSetDevice(device_index), "selecting GPU " + std::to_string(device_index));
    ZT_CUDNN_CHECK(fe::detail::create_handle(&native),
                   "the cuDNN handle of GPU " + std::to_string(device_index));
  }
  ~Handle() {
    if (native != nullptr) fe::detail::destroy_handle(native);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

struct CudnnAttention::Graph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace_bytes = 0;  // what the built graph asks for
};

CudnnAttention::CudnnAttention(int device_index) : device_index_(device_index) {}
CudnnAttention::~CudnnAttention() = default;

namespace {

// The forward graph: o and stats from q, k and v.
std::shared_ptr<fe::graph::Graph> forward_graph(const AttentionShape& shape,
                                                const AttentionHeads& q, const AttentionHeads& k,
                                                const AttentionHeads& v, const AttentionHeads& o) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(frontend_dtype(q.base.dtype()))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const auto options = fe::graph::SDPA_attributes()
                           .set_name("causal_attention")
                           .set_generate_stats(true)
                           .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                           .set_diagonal_band_right_bound(0)
                           .set_attn_scale(shape.scale());
  auto [o_tensor, stats] = graph->sdpa(input(*graph, "q", kQ, q), input(*graph, "k", kK, k),
                                       input(*graph, "v", kV, v), options);
  bind_output(o_tensor, kO, o);
  stats->set_output(true)
      .set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim(stats_dims(shape))
      .set_stride(stats_strides(shape));
  return graph;
}

// The backward graph: dq, dk and dv from q, k, v, o, d_o and stats.
std::shared_ptr<fe::graph::Graph> backward_graph(const AttentionShape& shape,
                                                 std::initializer_list<const AttentionHeads*> ops) {
  const AttentionHeads* const* x = ops.begin();  // q, k, v, o, d_o, dq, dk, dv
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(frontend_dtype(x[0]->base.dtype()))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const TensorAttributes stats = graph->tensor(fe::graph::Tensor_attributes()
                                                   .set_name("stats")
                                                   .set_uid(kStats)
                                                   .set_data_type(fe::DataType_t::FLOAT)
                                                   .set_dim(stats_dims(shape))
                                                   .set_stride(stats_strides(shape)));
  const auto options = fe::graph::SDPA_backward_attributes()
                           .set_name("causal_attention_backward")
                           .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                           .set_diagonal_band_right_bound(0)
                           .set_attn_scale(shape.scale());
  auto [dq, dk, dv] = graph->sdpa_backward(
      input(*graph, "q", kQ, *x[0]), input(*graph, "k", kK, *x[1]), input(*graph, "v", kV, *x[2]),
      input(*graph, "o", kO, *x[3]), input(*graph, "d_o", kDO, *x[4]), stats, options);
  bind_output(dq, kDQ, *x[5]);
  bind_output(dk, kDK, *x[6]);
  bind_output(dv, kDV, *x[7]);
  return graph;
}

// Validates and builds `graph` with the heuristics' first plan whose own workspace fits in
// max_workspace_bytes.
void build(fe::graph::Graph& graph, cudnnHandle_t handle, std::int64_t max_workspace_bytes,
           const std::string& context) {
  check_frontend(graph.validate(), "validate", context);
  check_frontend(graph.build_operation_graph(handle), "build_operation_graph", context);
  check_frontend(graph.create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans",
                 context);
  graph.deselect_workspace_greater_than(max_workspace_bytes);
  check_frontend(graph.check_support(handle), "check_support", context);
  check_frontend(graph.build_plans(handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans",
                 context);
}

}  // namespace

CudnnAttention::Handle* CudnnAttention::handle() {
  if (handle_ != nullptr) return handle_.get();
  if (handle_failure_) return nullptr;
  try {
    require_cudnn_library();
    handle_ = std::make_unique<Handle>(device_index_);
  } catch (const std::exception& e) {
    handle_failure_ = e.what();
    return nullptr;
  }
  return handle_.get();
}

const CudnnAttention::Graph* CudnnAttention::graph_for(
    const AttentionGraphKey& key, const AttentionShape& shape,
    std::initializer_list<const AttentionHeads*> operands, bool warn) {
  if (const auto found = graphs_.find(key); found != graphs_.end()) return found->second.get();
  if (refused_.contains(key)) return nullptr;
  const std::string what = describe(shape, key.dtype, key.backward);
  std::string reason;
  if (Handle* native = handle(); native == nullptr) {
    reason = *handle_failure_;
  } else {
    auto built = std::make_unique<Graph>();
    try {
      const AttentionHeads* const* x = operands.begin();
      built->graph = key.backward ? backward_graph(shape, operands)
                                  : forward_graph(shape, *x[0], *x[1], *x[2], *x[3]);
      build(*built->graph, native->native, cudnn_attention_workspace_bytes(shape, key.backward),
            what);
      check_frontend(built->graph->get_workspace_size(built->workspace_bytes), "get_workspace_size",
                     what);
      return (graphs_[key] = std::move(built)).get();
    } catch (const CudnnError& e) {
      reason = e.what();
    } catch (const std::exception& e) {  // the frontend throws for what it cannot express
      reason = "cuDNN frontend failed (" + what + "): " + e.what();
    }
  }
  // Note [cuDNN attention never ends a run]: said once per refused shape, but not for check()'s,
  // whose caller says why (or refuses the run).
  if (warn) {
    std::fprintf(stderr,
                 "zerotrain: warning: cuDNN cannot run the %s (%s); this shape runs on the rows "
                 "attention instead\n",
                 what.c_str(), reason.c_str());
  }
  refused_.emplace(key, reason);
  return nullptr;
}

std::optional<std::string> CudnnAttention::check(const AttentionShape& shape, DType dtype) {
  // Graph building reads only shapes and strides: the operands lie over no memory.
  alignas(16) static std::byte nowhere[16];
  const Device gpu = Device::cuda(device_index_);
  const std::int64_t width = (shape.n_head + 2 * shape.n_kv_head) * shape.head_dim;
  const Tensor qkv = Tensor::wrap(nowhere, Shape{shape.batch, shape.seq_len, width}, dtype, gpu);
  const Tensor y = Tensor::wrap(
      nowhere, Shape{shape.batch, shape.seq_len, shape.n_head * shape.head_dim}, dtype, gpu);
  const Tensor lse = Tensor::wrap(nowhere, shape.lse_shape(), DType::kF32, gpu);
  const QkvHeads in = split_qkv(qkv, shape.n_head, shape.n_kv_head);
  const AttentionHeads o = AttentionHeads::packed(y, shape.n_head);
  const std::lock_guard<std::mutex> lock(mutex_);
  const AttentionShape checked = attention_shape_of(in.q, in.k, in.v, o, lse);
  const std::initializer_list<const AttentionHeads*> forward_operands{&in.q, &in.k, &in.v, &o};
  // dq, dk and dv are columns of a dqkv shaped as qkv, dy is shaped as y: the same strides.
  const std::initializer_list<const AttentionHeads*> backward_operands{&in.q, &in.k, &in.v, &o,
                                                                       &o,    &in.q, &in.k, &in.v};
  for (const bool backward : {false, true}) {
    const auto operands = backward ? backward_operands : forward_operands;
    const AttentionGraphKey key = attention_graph_key(checked, backward, operands);
    if (graph_for(key, checked, operands, false) == nullptr) return refused_.at(key);
  }
  return std::nullopt;
}

bool CudnnAttention::forward(DeviceContext& device, void* stream, const AttentionHeads& q,
                             const AttentionHeads& k, const AttentionHeads& v,
                             const AttentionHeads& o, const Tensor& lse) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  if (shape.batch == 0 || shape.seq_len == 0) return true;
  const std::lock_guard<std::mutex> lock(mutex_);
  const Graph* graph =
      graph_for(attention_graph_key(shape, false, {&q, &k, &v, &o}), shape, {&q, &k, &v, &o});
  if (graph == nullptr) return false;
  std::unordered_map<std::int64_t, void*> pack{{kQ, address_of(q)},
                                               {kK, address_of(k)},
                                               {kV, address_of(v)},
                                               {kO, address_of(o)},
                                               {kStats, lse.data()}};
  const std::string context = describe(shape, q.base.dtype(), false);
  ZT_CUDNN_CHECK(fe::detail::set_stream(handle_->native, static_cast<cudaStream_t>(stream)),
                 context);
  const Allocation workspace =
      cudnn_attention_workspace(device, shape, false, graph->workspace_bytes);
  check_frontend(graph->graph->execute(handle_->native, pack, workspace.data()), "execute",
                 context);
  return true;
}

bool CudnnAttention::backward(DeviceContext& device, void* stream, const AttentionHeads& q,
                              const AttentionHeads& k, const AttentionHeads& v,
                              const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                              const AttentionHeads& dq, const AttentionHeads& dk,
                              const AttentionHeads& dv) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  check_attention_gradients(shape, d_o, dq, dk, dv);
  if (shape.batch == 0 || shape.seq_len == 0) return true;
  const std::lock_guard<std::mutex> lock(mutex_);
  const Graph* graph =
      graph_for(attention_graph_key(shape, true, {&q, &k, &v, &o, &d_o, &dq, &dk, &dv}), shape,
                {&q, &k, &v, &o, &d_o, &dq, &dk, &dv});
  if (graph == nullptr) return false;
  std::unordered_map<std::int64_t, void*> pack{
      {kQ, address_of(q)},   {kK, address_of(k)},   {kV, address_of(v)},
      {kO, address_of(o)},   {kStats, lse.data()},  {kDO, address_of(d_o)},
      {kDQ, address_of(dq)}, {kDK, address_of(dk)}, {kDV, address_of(dv)}};
  const std::string context = describe(shape, q.base.dtype(), true);
  ZT_CUDNN_CHECK(fe::detail::set_stream(handle_->native, static_cast<cudaStream_t>(stream)),
                 context);
  const Allocation workspace =
      cudnn_attention_workspace(device, shape, true, graph->workspace_bytes);
  check_frontend(graph->graph->execute(handle_->native, pack, workspace.data()), "execute",
                 context);
  return true;
}

}  // namespace zt::nn::cuda
