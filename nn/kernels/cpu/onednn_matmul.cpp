// oneDNN's matmul primitive behind onednn_matmul.h. A primitive is made once per shape and
// kept (Note [Matmul primitives per thread]); each call points its memory objects at the
// caller's matrices and runs it.
#include "nn/kernels/cpu/onednn_matmul.h"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "core/error.h"
#include "nn/kernels/cpu/onednn_api.h"

namespace zt::nn::cpu {
namespace {

// Note [Matmul primitives per thread]
// Making a primitive costs ~0.1-1 ms (oneDNN generates its kernels), running one of these
// shapes about as much, so primitives are cached. The cache is per thread: ranks that run
// as threads of one process call GEMMs at once, and a primitive's memory objects (which
// carry the matrices' addresses) must not be shared; a step asks for a dozen shapes, so a
// linear search is enough, and the cache is bounded (the least recently used primitive goes
// first) for runs whose shapes vary. A thread's primitives are destroyed when it exits.
constexpr std::size_t kMaxCachedPrimitives = 64;

struct Shape {
  bool transpose_a, transpose_b;
  std::int64_t m, n, k, lda, ldb, ldc;
  float beta;
  int threads;
  bool operator==(const Shape&) const = default;
};

class Primitive {
 public:
  Primitive(const OneDnnApi& api, dnnl_engine_t engine, const Shape& s) : api_(api), shape_(s) {
    // Row-major strides of each logical matrix; a transposed operand is stored (cols, rows).
    const dnnl_dims_t a_dims{s.m, s.k}, b_dims{s.k, s.n}, c_dims{s.m, s.n};
    const dnnl_dims_t a_strides{s.transpose_a ? 1 : s.lda, s.transpose_a ? s.lda : 1};
    const dnnl_dims_t b_strides{s.transpose_b ? 1 : s.ldb, s.transpose_b ? s.ldb : 1};
    const dnnl_dims_t c_strides{s.ldc, 1};
    dnnl_memory_desc_t a_md, b_md, c_md;
    check_onednn_status(api.memory_desc_init_by_strides(&a_md, 2, a_dims, dnnl_f32, a_strides),
                        "matmul A descriptor");
    check_onednn_status(api.memory_desc_init_by_strides(&b_md, 2, b_dims, dnnl_f32, b_strides),
                        "matmul B descriptor");
    check_onednn_status(api.memory_desc_init_by_strides(&c_md, 2, c_dims, dnnl_f32, c_strides),
                        "matmul C descriptor");
    dnnl_matmul_desc_t desc;
    check_onednn_status(api.matmul_desc_init(&desc, &a_md, &b_md, nullptr, &c_md), "matmul desc");
    dnnl_primitive_attr_t attr = nullptr;
    check_onednn_status(api.primitive_attr_create(&attr), "matmul attributes");
    dnnl_post_ops_t post_ops = nullptr;
    dnnl_primitive_desc_t pd = nullptr;
    dnnl_status_t status = api.post_ops_create(&post_ops);
    // C's old value is added by a sum post-op scaled by beta; beta 0 has none, so C is not read.
    if (status == dnnl_success && s.beta != 0.0f)
      status = api.post_ops_append_sum(post_ops, s.beta);
    if (status == dnnl_success) status = api.primitive_attr_set_post_ops(attr, post_ops);
    if (status == dnnl_success)
      status = api.primitive_desc_create(&pd, &desc, attr, engine, nullptr);
    if (status == dnnl_success) status = api.primitive_create(&primitive_, pd);
    if (pd != nullptr) api.primitive_desc_destroy(pd);
    if (post_ops != nullptr) api.post_ops_destroy(post_ops);
    api.primitive_attr_destroy(attr);
    check_onednn_status(status, "matmul primitive");
    for (auto [memory, md] :
         {std::pair{&a_, &a_md}, std::pair{&b_, &b_md}, std::pair{&c_, &c_md}}) {
      check_onednn_status(api.memory_create(memory, md, engine, DNNL_MEMORY_NONE), "matmul memory");
    }
  }
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;
  ~Primitive() {
    for (dnnl_memory_t memory : {a_, b_, c_}) {
      if (memory != nullptr) api_.memory_destroy(memory);
    }
    if (primitive_ != nullptr) api_.primitive_destroy(primitive_);
  }

  const Shape& shape() const { return shape_; }

  void run(dnnl_stream_t stream, const float* a, const float* b, float* c) const {
    // oneDNN reads its source and weights only; its memory API takes them non-const.
    check_onednn_status(api_.memory_set_data_handle(a_, const_cast<float*>(a)), "matmul A");
    check_onednn_status(api_.memory_set_data_handle(b_, const_cast<float*>(b)), "matmul B");
    check_onednn_status(api_.memory_set_data_handle(c_, c), "matmul C");
    const std::array<dnnl_exec_arg_t, 3> args{dnnl_exec_arg_t{DNNL_ARG_SRC, a_},
                                              dnnl_exec_arg_t{DNNL_ARG_WEIGHTS, b_},
                                              dnnl_exec_arg_t{DNNL_ARG_DST, c_}};
    check_onednn_status(api_.primitive_execute(primitive_, stream, 3, args.data()), "matmul");
    check_onednn_status(api_.stream_wait(stream), "matmul stream wait");
  }

 private:
  const OneDnnApi& api_;
  Shape shape_;
  dnnl_primitive_t primitive_ = nullptr;
  dnnl_memory_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

class PrimitiveCache {
 public:
  explicit PrimitiveCache(const OneDnnApi& api) : api_(api) {
    check_onednn_status(api.engine_create(&engine_, dnnl_cpu, 0), "CPU engine");
    check_onednn_status(api.stream_create(&stream_, engine_, dnnl_stream_default_flags),
                        "CPU stream");
  }
  PrimitiveCache(const PrimitiveCache&) = delete;
  PrimitiveCache& operator=(const PrimitiveCache&) = delete;
  ~PrimitiveCache() {
    primitives_.clear();  // before the engine they were made on
    if (stream_ != nullptr) api_.stream_destroy(stream_);
    if (engine_ != nullptr) api_.engine_destroy(engine_);
  }

  dnnl_stream_t stream() const { return stream_; }
  std::size_t size() const { return primitives_.size(); }

  // The primitive for `shape`, made if new; the most recently used is kept last.
  const Primitive& get(const Shape& shape) {
    const auto found = std::find_if(primitives_.begin(), primitives_.end(),
                                    [&](const auto& p) { return p->shape() == shape; });
    if (found != primitives_.end()) {
      std::rotate(found, found + 1, primitives_.end());
      return *primitives_.back();
    }
    if (primitives_.size() == kMaxCachedPrimitives) primitives_.erase(primitives_.begin());
    primitives_.push_back(std::make_unique<Primitive>(api_, engine_, shape));
    return *primitives_.back();
  }

 private:
  const OneDnnApi& api_;
  dnnl_engine_t engine_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
  std::vector<std::unique_ptr<Primitive>> primitives_;
};

PrimitiveCache& this_threads_cache() {
  thread_local PrimitiveCache cache(onednn());
  return cache;
}

}  // namespace

void matmul_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                float* c, std::int64_t ldc, int threads) {
  ZT_CHECK(m > 0 && n > 0 && k > 0, "matmul needs positive sizes");
  PrimitiveCache& cache = this_threads_cache();
  const Primitive& primitive =
      cache.get({transpose_a, transpose_b, m, n, k, lda, ldb, ldc, beta, threads});
  primitive.run(cache.stream(), a, b, c);
}

int matmul_primitives_cached_in_this_thread() {
  return static_cast<int>(this_threads_cache().size());
}

}  // namespace zt::nn::cpu
