// Note [oneDNN opened at run time]
// libdnnl is opened with dlopen at the first GEMM rather than linked, because it brings
// OpenMP (libgomp) with it and libgomp reads its wait policy once, when it loads. Its
// default spins a waiting thread for a while; when the cores are shared with other
// processes (ranks on one host, a test run in parallel, a build) every GEMM then waits for a
// descheduled spinner: measured 10-30x slower at 2 threads on a busy 2-core machine, and no
// slower than OpenBLAS with passive waiting. So OMP_WAIT_POLICY=passive is set first, unless
// the user chose a policy; a process that already loaded libgomp keeps its own.
#include "nn/kernels/cpu/onednn_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace zt::nn::cpu {
namespace {

static_assert(sizeof(BF16) == 2 && alignof(BF16) == 2, "BF16 must be layout-compatible with bf16");

constexpr const char* kLibrary = "libdnnl.so.2";  // oneDNN 2.x, the API declared in the header

template <typename Fn>
void bind(void* handle, const char* name, Fn*& fn) {
  void* symbol = ::dlsym(handle, name);
  ZT_CHECK(symbol != nullptr, std::string(kLibrary) + " has no " + name);
  fn = reinterpret_cast<Fn*>(symbol);
}

}  // namespace

const OneDnnApi& onednn() {
  static const OneDnnApi api = [] {
    ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
    void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      throw Error(std::string("cannot load oneDNN, which runs the CPU GEMMs (") + ::dlerror() +
                  "): install libdnnl-dev (scripts/setup)");
    }
    OneDnnApi d{};
    bind(handle, "dnnl_sgemm", d.sgemm);
    bind(handle, "dnnl_gemm_bf16bf16f32", d.gemm_bf16);
    bind(handle, "dnnl_version", d.version);
    bind(handle, "dnnl_get_effective_cpu_isa", d.effective_isa);
    bind(handle, "dnnl_cpu_isa2str", d.isa_name);
    bind(handle, "dnnl_engine_create", d.engine_create);
    bind(handle, "dnnl_engine_destroy", d.engine_destroy);
    bind(handle, "dnnl_stream_create", d.stream_create);
    bind(handle, "dnnl_stream_destroy", d.stream_destroy);
    bind(handle, "dnnl_stream_wait", d.stream_wait);
    bind(handle, "dnnl_memory_desc_init_by_strides", d.memory_desc_init_by_strides);
    bind(handle, "dnnl_matmul_desc_init", d.matmul_desc_init);
    bind(handle, "dnnl_primitive_attr_create", d.primitive_attr_create);
    bind(handle, "dnnl_primitive_attr_destroy", d.primitive_attr_destroy);
    bind(handle, "dnnl_primitive_attr_set_post_ops", d.primitive_attr_set_post_ops);
    bind(handle, "dnnl_post_ops_create", d.post_ops_create);
    bind(handle, "dnnl_post_ops_destroy", d.post_ops_destroy);
    bind(handle, "dnnl_post_ops_append_sum", d.post_ops_append_sum);
    bind(handle, "dnnl_primitive_desc_create", d.primitive_desc_create);
    bind(handle, "dnnl_primitive_desc_destroy", d.primitive_desc_destroy);
    bind(handle, "dnnl_primitive_create", d.primitive_create);
    bind(handle, "dnnl_primitive_destroy", d.primitive_destroy);
    bind(handle, "dnnl_memory_create", d.memory_create);
    bind(handle, "dnnl_memory_destroy", d.memory_destroy);
    bind(handle, "dnnl_memory_set_data_handle", d.memory_set_data_handle);
    bind(handle, "dnnl_primitive_execute", d.primitive_execute);
    bind(handle, "omp_set_num_threads", d.omp_set_num_threads);
    bind(handle, "omp_get_max_threads", d.omp_get_max_threads);
    d.default_threads = d.omp_get_max_threads();
    return d;
  }();
  return api;
}

void check_onednn_status(dnnl_status_t status, const char* what) {
  ZT_CHECK(status == dnnl_success,
           std::string(what) + " failed in oneDNN (status " + std::to_string(status) + ")");
}

}  // namespace zt::nn::cpu
