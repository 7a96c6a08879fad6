// ZT_HOST_DEVICE marks arithmetic that both the CPU kernels and the CUDA kernels call, so
// each formula is written once and tested on every commit on the CPU. No CUDA header here.
#pragma once

#if defined(__CUDACC__)
#define ZT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ZT_HOST_DEVICE inline
#endif
