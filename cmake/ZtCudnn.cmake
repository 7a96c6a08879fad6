# ZT_CUDNN = AUTO | OFF: the CUDA backend's flash attention through cuDNN's fused SDPA
# (runtime.attention = "cudnn"). It needs, besides the CUDA backend, cuDNN 9's headers (cudnn.h,
# with the CUDA toolkit or from Debian/NVIDIA packages) and the header-only cuDNN frontend
# (cudnn_frontend.h), which scripts/cudnn-frontend installs from PyPI under build/;
# ZT_CUDNN_FRONTEND_INCLUDE_DIR points elsewhere. When any of them is missing the build goes on
# without it and says so; asking for it at run time is then a ConfigError naming the key.
# Nothing links libcudnn: the frontend's dynamic loading mode reaches cuDNN through the
# libcudnn.so.9 the module opens when attention first uses it (Note [CUDA libraries opened
# when used] in core/device/cuda_module.h), so a GPU machine without cuDNN still trains.
set(ZT_HAVE_CUDNN OFF)
set(ZT_CUDNN "AUTO" CACHE STRING "Build the cuDNN attention when cuDNN and its frontend are found: AUTO or OFF")
set_property(CACHE ZT_CUDNN PROPERTY STRINGS AUTO OFF)
if(NOT ZT_CUDNN MATCHES "^(AUTO|OFF)$")
  message(FATAL_ERROR "ZT_CUDNN must be AUTO or OFF, got '${ZT_CUDNN}'")
endif()
if(ZT_HAVE_CUDA AND ZT_CUDNN STREQUAL "AUTO")
  file(GLOB zt_cudnn_frontend_hint
       "${CMAKE_SOURCE_DIR}/build/cudnn-frontend/lib/python3*/site-packages/include")
  find_path(ZT_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h HINTS ${zt_cudnn_frontend_hint}
            DOC "Directory of the cuDNN frontend's cudnn_frontend.h (scripts/cudnn-frontend)")
  find_path(ZT_CUDNN_INCLUDE_DIR cudnn_version.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  set(zt_cudnn_missing "")
  if(NOT ZT_CUDNN_INCLUDE_DIR)
    list(APPEND zt_cudnn_missing "cuDNN 9's headers (cudnn_version.h)")
  endif()
  if(NOT EXISTS "${ZT_CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend.h")
    list(APPEND zt_cudnn_missing "the cuDNN frontend header cudnn_frontend.h (run \
scripts/cudnn-frontend, or set ZT_CUDNN_FRONTEND_INCLUDE_DIR)")
  endif()
  if(zt_cudnn_missing STREQUAL "")
    file(STRINGS "${ZT_CUDNN_INCLUDE_DIR}/cudnn_version.h" zt_cudnn_major
         REGEX "#define CUDNN_MAJOR ")
    string(REGEX MATCH "[0-9]+" zt_cudnn_major "${zt_cudnn_major}")
    if(NOT zt_cudnn_major STREQUAL "9")
      list(APPEND zt_cudnn_missing "cuDNN 9 (found cuDNN ${zt_cudnn_major} headers)")
    endif()
  endif()
  if(zt_cudnn_missing STREQUAL "")
    add_library(zt_cudnn INTERFACE IMPORTED)
    # SYSTEM: the frontend's headers are not held to the project's warnings.
    target_include_directories(zt_cudnn SYSTEM INTERFACE "${ZT_CUDNN_FRONTEND_INCLUDE_DIR}"
                                                         "${ZT_CUDNN_INCLUDE_DIR}")
    target_compile_definitions(zt_cudnn INTERFACE NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING)
    set(ZT_HAVE_CUDNN ON)
    message(STATUS "zerotrain: cuDNN attention ON (${ZT_CUDNN_INCLUDE_DIR}; frontend "
                   "${ZT_CUDNN_FRONTEND_INCLUDE_DIR})")
  else()
    list(JOIN zt_cudnn_missing " and " zt_cudnn_missing)
    set(ZT_CUDNN_MISSING "configure did not find ${zt_cudnn_missing}")
    message(STATUS "zerotrain: cuDNN attention OFF: ${ZT_CUDNN_MISSING}; "
                   "runtime.attention = \"cudnn\" will be refused")
  endif()
elseif(ZT_HAVE_CUDA)
  set(ZT_CUDNN_MISSING "it was configured with -DZT_CUDNN=OFF")
  message(STATUS "zerotrain: cuDNN attention OFF (ZT_CUDNN=OFF)")
endif()
