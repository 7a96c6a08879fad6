# The CUDA module needs only CUDA's runtime and cuBLAS(Lt) to load (Note [CUDA libraries
# opened when used] in core/device/cuda_module.h):
#  1. its NEEDED entries (readelf -d) name no libcudnn and no libnccl, and do name libcudart;
#  2. with libcudnn* and libnccl* out of the loader's reach, the probe program (linked to
#     libzerotrain only) loads the module, and the module says by name that libcudnn.so.9 and
#     libnccl.so.2 cannot be opened. The reach is a private folder: copies of libzerotrain and
#     the module whose RUNPATH is $ORIGIN, links to CUDA's runtime and cuBLAS(Lt) only, and the
#     system's library folders, searched by the loader run directly with --inhibit-cache (so
#     /etc/ld.so.cache, which lists cuDNN and NCCL here, is not read);
#  3. the probe run as built (everything in reach) does not say so: the check can tell.
#   cmake -DZT_MODULE=<libzerotrain_cuda.so> -DZT_LIBRARY=<libzerotrain.so.N> -DZT_PROBE=<probe>
#         -DZT_CUDA_LIBRARY_DIR=<dir> -DZT_WORK_DIR=<scratch>
#         -P check_cuda_module_without_cudnn_nccl.cmake
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND readelf -d "${ZT_MODULE}" RESULT_VARIABLE result OUTPUT_VARIABLE dynamic
                ERROR_VARIABLE dynamic)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "readelf -d ${ZT_MODULE} failed:\n${dynamic}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
list(JOIN needed "\n" needed)
if(needed MATCHES "libcudnn|libnccl")
  message(FATAL_ERROR "${ZT_MODULE} links cuDNN or NCCL, so it cannot load without them:\n"
                      "${needed}")
endif()
if(NOT needed MATCHES "libcudart")
  message(FATAL_ERROR "${ZT_MODULE} names no libcudart: readelf's output was not read:\n"
                      "${dynamic}")
endif()

# The private folder.
set(reach "${ZT_WORK_DIR}/reach")
file(REMOVE_RECURSE "${ZT_WORK_DIR}")
file(MAKE_DIRECTORY "${reach}")
foreach(file "${ZT_MODULE}" "${ZT_LIBRARY}" "${ZT_PROBE}")
  # Under the name the loader asks for (libzerotrain's soname), holding the file it names.
  get_filename_component(name "${file}" NAME)
  execute_process(COMMAND cp -L "${file}" "${reach}/${name}" RESULT_VARIABLE copied)
  if(NOT copied EQUAL 0)
    message(FATAL_ERROR "cannot copy ${file} into ${reach}")
  endif()
  # A build-tree RUNPATH names CUDA's folder, where cuDNN and NCCL are: replaced where there
  # is one (libzerotrain has none: it needs nothing outside the system's folders).
  execute_process(COMMAND readelf -d "${reach}/${name}" OUTPUT_VARIABLE dynamic)
  if(dynamic MATCHES "\\((RPATH|RUNPATH)\\)")
    file(RPATH_SET FILE "${reach}/${name}" NEW_RPATH "$ORIGIN")
  endif()
endforeach()
file(GLOB cuda_libraries "${ZT_CUDA_LIBRARY_DIR}/libcudart.so*"
     "${ZT_CUDA_LIBRARY_DIR}/libcublas.so*" "${ZT_CUDA_LIBRARY_DIR}/libcublasLt.so*")
foreach(library IN LISTS cuda_libraries)
  get_filename_component(name "${library}" NAME)
  file(CREATE_LINK "${library}" "${reach}/${name}" SYMBOLIC)
endforeach()
# The system's folders (libstdc++, Gloo, TOML++), which must hold no cuDNN or NCCL themselves.
set(system_dirs /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib /lib64 /usr/lib64)
set(search "${reach}")
foreach(dir IN LISTS system_dirs)
  file(GLOB stray "${dir}/libcudnn*" "${dir}/libnccl*")
  if(stray)
    message(STATUS "SKIP: ${dir} holds ${stray}: cuDNN or NCCL cannot be put out of reach here")
    return()
  endif()
  if(IS_DIRECTORY "${dir}")
    string(APPEND search ":${dir}")
  endif()
endforeach()
file(GLOB loader /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1)
if(NOT loader)
  message(STATUS "SKIP: no dynamic loader at a known path to run with --inhibit-cache")
  return()
endif()
list(GET loader 0 loader)

execute_process(COMMAND env -u LD_LIBRARY_PATH "${loader}" --inhibit-cache --library-path
                        "${search}" "${reach}/cuda_libraries_probe"
                RESULT_VARIABLE result OUTPUT_VARIABLE hidden ERROR_VARIABLE hidden_stderr
                TIMEOUT 120)
set(said "exit ${result}; stdout:\n${hidden}\nstderr:\n${hidden_stderr}")
if(NOT result EQUAL 0 OR NOT hidden MATCHES "module: loaded")
  message(FATAL_ERROR "the CUDA module did not load with cuDNN and NCCL out of reach (${said})")
endif()
if(NOT hidden MATCHES "nccl: [^\n]*libnccl\\.so\\.2")
  message(FATAL_ERROR "NCCL out of reach was not named libnccl.so.2 (${said})")
endif()
if(NOT hidden MATCHES "cudnn: [^\n]*libcudnn\\.so\\.9 cannot be used")
  message(FATAL_ERROR "cuDNN out of reach was not named libcudnn.so.9 (${said})")
endif()

# In reach, neither is said to be missing (the probe can tell the two apart).
execute_process(COMMAND "${ZT_PROBE}" RESULT_VARIABLE result OUTPUT_VARIABLE open
                ERROR_VARIABLE open_stderr TIMEOUT 120)
if(NOT result EQUAL 0 OR NOT open MATCHES "nccl: opens" OR open MATCHES "libcudnn\\.so\\.9 cannot")
  message(FATAL_ERROR "with cuDNN and NCCL in reach the probe said (exit ${result}):\n${open}\n"
                      "${open_stderr}")
endif()
message(STATUS "out of reach:\n${hidden}in reach:\n${open}")
