# Third-party dependencies, all from Debian packages (scripts/setup installs them).
find_package(Threads REQUIRED)
find_package(tomlplusplus 3.3 REQUIRED)
find_package(Boost 1.74 REQUIRED)  # Asio and System are header-only in 1.74
find_package(Gloo REQUIRED)       # target `gloo`; ships only a RelWithDebInfo config
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(ZT_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas REQUIRED)
if(ZT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
