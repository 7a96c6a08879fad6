// oneDNN's C entry points, from libdnnl opened at run time (Note [oneDNN opened at run time]
// in onednn_api.cpp). Only the CPU GEMM files use it: gemm_cpu.cpp (sgemm, the bf16 GEMM,
// threads) and onednn_matmul.cpp (the matmul primitive).
#pragma once

#include <dnnl.h>

#include "core/dtype.h"

namespace zt::nn::cpu {

// The entry points used, as oneDNN 2.x declares them. dnnl_gemm_bf16bf16f32 is exported with
// C linkage (row-major like dnnl_sgemm) but declared only in oneDNN's internal headers; its
// bfloat16_t is a 16-bit raw-bits struct, as BF16 is.
struct OneDnnApi {
  dnnl_status_t (*sgemm)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float, const float*,
                         dnnl_dim_t, const float*, dnnl_dim_t, float, float*, dnnl_dim_t);
  dnnl_status_t (*gemm_bf16)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float, const BF16*,
                             dnnl_dim_t, const BF16*, dnnl_dim_t, float, float*, dnnl_dim_t);
  const dnnl_version_t* (*version)();
  dnnl_cpu_isa_t (*effective_isa)();
  const char* (*isa_name)(dnnl_cpu_isa_t);
  // The matmul primitive (onednn_matmul.cpp).
  dnnl_status_t (*engine_create)(dnnl_engine_t*, dnnl_engine_kind_t, size_t);
  dnnl_status_t (*engine_destroy)(dnnl_engine_t);
  dnnl_status_t (*stream_create)(dnnl_stream_t*, dnnl_engine_t, unsigned);
  dnnl_status_t (*stream_destroy)(dnnl_stream_t);
  dnnl_status_t (*stream_wait)(dnnl_stream_t);
  dnnl_status_t (*memory_desc_init_by_strides)(dnnl_memory_desc_t*, int, const dnnl_dims_t,
                                               dnnl_data_type_t, const dnnl_dims_t);
  dnnl_status_t (*matmul_desc_init)(dnnl_matmul_desc_t*, const dnnl_memory_desc_t*,
                                    const dnnl_memory_desc_t*, const dnnl_memory_desc_t*,
                                    const dnnl_memory_desc_t*);
  dnnl_status_t (*primitive_attr_create)(dnnl_primitive_attr_t*);
  dnnl_status_t (*primitive_attr_destroy)(dnnl_primitive_attr_t);
  dnnl_status_t (*primitive_attr_set_post_ops)(dnnl_primitive_attr_t, const_dnnl_post_ops_t);
  dnnl_status_t (*post_ops_create)(dnnl_post_ops_t*);
  dnnl_status_t (*post_ops_destroy)(dnnl_post_ops_t);
  dnnl_status_t (*post_ops_append_sum)(dnnl_post_ops_t, float);
  dnnl_status_t (*primitive_desc_create)(dnnl_primitive_desc_t*, const_dnnl_op_desc_t,
                                         const_dnnl_primitive_attr_t, dnnl_engine_t,
                                         const_dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_desc_destroy)(dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_create)(dnnl_primitive_t*, const_dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_destroy)(dnnl_primitive_t);
  dnnl_status_t (*memory_create)(dnnl_memory_t*, const dnnl_memory_desc_t*, dnnl_engine_t, void*);
  dnnl_status_t (*memory_destroy)(dnnl_memory_t);
  dnnl_status_t (*memory_set_data_handle)(dnnl_memory_t, void*);
  dnnl_status_t (*primitive_execute)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                     const dnnl_exec_arg_t*);
  // The OpenMP oneDNN was built with, loaded with it.
  void (*omp_set_num_threads)(int);
  int (*omp_get_max_threads)();
  int default_threads;  // OpenMP's own count when oneDNN loaded, for "not set"
};

// Opens libdnnl on first use (throws zt::Error naming the package when it is missing).
const OneDnnApi& onednn();

// Throws an InternalError naming `what` unless status is dnnl_success.
void check_onednn_status(dnnl_status_t status, const char* what);

}  // namespace zt::nn::cpu
