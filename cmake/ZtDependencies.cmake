# Third-party dependencies, all from Debian packages (scripts/setup installs them).
find_package(Threads REQUIRED)
find_package(tomlplusplus 3.3 REQUIRED)
find_package(Boost 1.74 REQUIRED)  # Asio and System are header-only in 1.74
find_package(Gloo REQUIRED)       # target `gloo`; ships only a RelWithDebInfo config
# PCRE2 (libpcre2-dev) runs GPT-2's pre-tokenizer pattern, whose \p{L} and \p{N} need
# Unicode properties that std::regex lacks.
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZT_PCRE2 REQUIRED IMPORTED_TARGET GLOBAL libpcre2-8)
# oneDNN runs the CPU GEMMs: it picks its kernels from the CPU's features (Debian's OpenBLAS
# misdetects some AVX-512 Xeons). No CMake config in Debian 12: found by hand, wrapped in an
# imported target. nn opens the library at run time (dlopen), so that its OpenMP is set up
# before it loads; the target carries the headers and libdl, and the check that it exists.
find_library(ZT_DNNL_LIBRARY dnnl REQUIRED)
find_path(ZT_DNNL_INCLUDE_DIR dnnl.h REQUIRED)
add_library(zt::dnnl INTERFACE IMPORTED)
set_target_properties(zt::dnnl PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ZT_DNNL_INCLUDE_DIR}"
                                          INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
# OpenBLAS only for bench_gemm_backends, which measures it against oneDNN.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(ZT_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas REQUIRED)
if(ZT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
