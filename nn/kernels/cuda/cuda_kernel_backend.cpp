// The CUDA kernel backend: each op checks its context, picks the storage type and enqueues
// cuBLAS and the nn CUDA kernels on the compute stream. The Linear bias is added after the
// GEMM (a separate rounding in bf16, where the CPU path rounds once); embedding and layer-norm
// parameter gradients use atomics, so their last bits vary from run to run.
#include "nn/kernels/cuda/cuda_kernel_backend.h"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/dtype_contract.h"
#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/cuda/bias_cuda.h"
#include "nn/kernels/cuda/cross_entropy_cuda.h"
#include "nn/kernels/cuda/cuda_backend_internal.h"
#include "nn/kernels/cuda/cuda_check.h"
#include "nn/kernels/cuda/embedding_cuda.h"
#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/cuda/layer_norm_cuda.h"
#include "nn/kernels/cuda/residual_cuda.h"
#include "nn/kernels/token_ids.h"

namespace zt::nn::cuda {

std::unique_ptr<CublasHandle> detail::SharedCublasHandle::make_handle() const {
  // The handle belongs to the GPU that is current when it is created.
  ZT_CUDA_CHECK(cudaSetDevice(device_index_), "selecting GPU " + std::to_string(device_index_));
  return std::make_unique<CublasHandle>();
}

namespace {

using detail::dispatch_cuda_floating;

// A device tensor's contents, copied to the host once the compute stream has run.
template <typename T>
std::vector<T> to_host(DeviceContext& device, const Tensor& tensor) {
  std::vector<T> host(static_cast<std::size_t>(tensor.numel()));
  if (host.empty()) return host;
  device.ops().copy(tensor, Tensor::wrap(host.data(), tensor.shape(), tensor.dtype()));
  device.compute_stream().synchronize();
  return host;
}

class CudaKernelBackend final : public KernelBackend {
 public:
  explicit CudaKernelBackend(int device_index)
      : device_(Device::cuda(device_index)), cublas_(device_index) {}

  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
            const Tensor& b, float beta, const Tensor& c) const override {
    void* stream = stream_of(device);
    ZT_CHECK(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, "gemm over non-matrices");
    expect_dtype(b, a.dtype(), "gemm b");
    const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
    const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
    const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
    ZT_CHECK((transpose_b ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
             "gemm shapes do not match");
    ZT_CHECK(c.dtype() == DType::kF32 || c.dtype() == a.dtype(), "gemm c in a third dtype");
    cublas_.with_stream(stream, [&](CublasHandle& handle) {
      dispatch_cuda_floating(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if (c.dtype() == DType::kF32) {
          cuda::gemm<T, float>(handle, transpose_a, transpose_b, m, n, k, alpha, a.data_as<T>(),
                               a.dim(1), b.data_as<T>(), b.dim(1), beta, c.data_as<float>(), n);
        } else {
          cuda::gemm<T, T>(handle, transpose_a, transpose_b, m, n, k, alpha, a.data_as<T>(),
                           a.dim(1), b.data_as<T>(), b.dim(1), beta, c.data_as<T>(), n);
        }
      });
    });
  }

  void linear_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                      const Tensor& bias, const Tensor& y) const override {
    void* stream = stream_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cublas_.with_stream(stream, [&](CublasHandle& handle) {
        cuda::gemm<T, T>(handle, false, true, rows, out_features, in_features, 1.0f, x.data_as<T>(),
                         in_features, weight.data_as<T>(), in_features, 0.0f, y.data_as<T>(),
                         out_features);
      });
      if (bias.defined()) {
        bias_add_forward<T>(y.data_as<T>(), bias.data_as<T>(), rows, out_features, stream);
      }
    });
  }

  void linear_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                       const Tensor& dy, const Tensor& dx, const Tensor& dweight,
                       const Tensor& dbias) const override {
    void* stream = stream_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cublas_.with_stream(stream, [&](CublasHandle& handle) {
        cuda::gemm<T, T>(handle, false, false, rows, in_features, out_features, 1.0f,
                         dy.data_as<T>(), out_features, weight.data_as<T>(), in_features, 0.0f,
                         dx.data_as<T>(), in_features);
        cuda::gemm<T, float>(handle, true, false, out_features, in_features, rows, 1.0f,
                             dy.data_as<T>(), out_features, x.data_as<T>(), in_features, 1.0f,
                             dweight.data_as<float>(), in_features);
      });
      if (dbias.defined()) {
        bias_backward<T>(dy.data_as<T>(), dbias.data_as<float>(), rows, out_features, stream);
      }
    });
  }

  void gelu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::gelu_forward<T>(x.data_as<T>(), y.data_as<T>(), x.numel(), stream);
    });
  }
  void gelu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::gelu_backward<T>(x.data_as<T>(), dy.data_as<T>(), dx.data_as<T>(), x.numel(), stream);
    });
  }
  void relu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::relu_forward<T>(x.data_as<T>(), y.data_as<T>(), x.numel(), stream);
    });
  }
  void relu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::relu_backward<T>(x.data_as<T>(), dy.data_as<T>(), dx.data_as<T>(), x.numel(), stream);
    });
  }

  void add(DeviceContext& device, const Tensor& a, const Tensor& b,
           const Tensor& out) const override {
    void* stream = stream_of(device);
    ZT_CHECK(b.numel() == a.numel() && out.numel() == a.numel(), "add over different sizes");
    dispatch_cuda_floating(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      residual_add<T>(a.data_as<T>(), b.data_as<T>(), out.data_as<T>(), a.numel(), stream);
    });
  }

  void layer_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    void* stream = stream_of(device);
    const std::int64_t channels = weight.numel();
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::layer_norm_forward<T>(x.data_as<T>(), weight.data_as<T>(), bias.data_as<T>(),
                                  x.numel() / channels, channels, eps, y.data_as<T>(),
                                  mean.data_as<float>(), rstd.data_as<float>(), stream);
    });
  }

  void layer_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                           const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                           const Tensor& dx, const Tensor& dweight,
                           const Tensor& dbias) const override {
    void* stream = stream_of(device);
    const std::int64_t channels = weight.numel();
    dispatch_cuda_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::layer_norm_backward<T>(dy.data_as<T>(), x.data_as<T>(), weight.data_as<T>(),
                                   mean.data_as<float>(), rstd.data_as<float>(),
                                   x.numel() / channels, channels, dx.data_as<T>(),
                                   dweight.data_as<float>(), dbias.data_as<float>(), stream);
    });
  }

  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o,
                         const Tensor& lse) const override {
    detail::attention_forward(device, cublas_, stream_of(device), q, k, v, o, lse);
  }
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv) const override {
    detail::attention_backward(device, cublas_, stream_of(device), q, k, v, o, lse, d_o, dq, dk,
                               dv);
  }

  void embedding_forward(DeviceContext& device, const Tensor& ids, const Tensor& wte,
                         const Tensor& wpe, const Tensor& out) const override {
    void* stream = stream_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = wte.dim(1);
    // Ids are user data: checked on the host, with the CPU's message, before the kernel
    // (which would only trap) reads them. B * T ints: a small copy per micro-batch.
    const std::vector<std::int32_t> host_ids = to_host<std::int32_t>(device, ids);
    check_token_ids(host_ids.data(), ids.numel(), seq_len, wte.dim(0));
    dispatch_cuda_floating(wte.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::embedding_forward<T>(ids.data_as<std::int32_t>(), wte.data_as<T>(), wpe.data_as<T>(),
                                 ids.numel(), seq_len, channels, wte.dim(0), out.data_as<T>(),
                                 stream);
    });
  }

  void embedding_backward(DeviceContext& device, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    void* stream = stream_of(device);
    dispatch_cuda_floating(dout.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::embedding_backward<T>(ids.data_as<std::int32_t>(), dout.data_as<T>(), ids.numel(),
                                  ids.dim(1), dwte.dim(1), dwte.dim(0), dwte.data_as<float>(),
                                  dwpe.data_as<float>(), stream);
    });
  }

  double softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor& targets,
                               float grad_scale, const Tensor& dlogits) const override {
    void* stream = stream_of(device);
    const std::int64_t classes = logits.dim(logits.rank() - 1);
    const std::int64_t rows = logits.numel() / classes;
    const Tensor losses =
        Tensor::empty(Shape{rows}, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
    dispatch_cuda_floating(logits.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cuda::softmax_cross_entropy<T>(logits.data_as<T>(), targets.data_as<std::int32_t>(), rows,
                                     classes, grad_scale, losses.data_as<float>(),
                                     dlogits.data_as<T>(), stream);
    });
    // Summed on the host in double in row order, as the CPU backend sums.
    double loss_sum = 0.0;
    for (const float loss : to_host<float>(device, losses)) loss_sum += loss;
    return loss_sum;
  }

 private:
  void* stream_of(DeviceContext& device) const {
    return detail::compute_stream_of(device, device_);
  }

  Device device_;
  detail::SharedCublasHandle cublas_;
};

}  // namespace

const KernelBackend& cuda_kernel_backend(int device_index) {
  ZT_CHECK(device_index >= 0, "a negative GPU index");
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CudaKernelBackend>> backends;  // guarded by mutex
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<CudaKernelBackend>& backend = backends[device_index];
  if (backend == nullptr) backend = std::make_unique<CudaKernelBackend>(device_index);
  return *backend;
}

}  // namespace zt::nn::cuda
