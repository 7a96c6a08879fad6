# The installed binaries run from the prefix without LD_LIBRARY_PATH: the CLI finds
# libzerotrain through its RUNPATH $ORIGIN/../lib (not the build tree's copy), libzerotrain
# finds every library it needs and needs none of CUDA's, the CUDA module (when built) finds
# CUDA's libraries, and no RUNPATH names the build tree.
#   cmake -DZT_PREFIX=<prefix> -DZT_BUILD_DIR=<build dir> -DZT_LIBDIR=lib -DZT_BINDIR=bin
#         -DZT_VERSION=<version> [-DZT_CUDA_LIBRARY_DIR=<dir libzerotrain's RUNPATH must name>]
#         -P check_installed_binaries.cmake
cmake_minimum_required(VERSION 3.25)
set(cli "${ZT_PREFIX}/${ZT_BINDIR}/zerotrain")
set(library "${ZT_PREFIX}/${ZT_LIBDIR}/libzerotrain.so")
set(cuda_module "${ZT_PREFIX}/${ZT_LIBDIR}/libzerotrain_cuda.so")
set(clean_env "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH --unset=LD_PRELOAD)
find_program(READELF readelf REQUIRED)
set(problems "")

set(binaries "${cli}" "${library}")
if(ZT_CUDA_LIBRARY_DIR)
  list(APPEND binaries "${cuda_module}")
  if(NOT EXISTS "${cuda_module}")
    string(APPEND problems "a CUDA build installed no CUDA module ${cuda_module}\n")
  endif()
endif()
foreach(binary IN LISTS binaries)
  if(NOT EXISTS "${binary}")
    continue()
  endif()
  execute_process(COMMAND ${clean_env} ldd "${binary}" OUTPUT_VARIABLE resolved
                  ERROR_VARIABLE resolved RESULT_VARIABLE result TIMEOUT 60)
  if(NOT result EQUAL 0 OR resolved MATCHES "not found")
    string(APPEND problems "${binary} does not find its libraries:\n${resolved}\n")
  endif()
  string(FIND "${resolved}" "=> ${ZT_PREFIX}/${ZT_BINDIR}/../${ZT_LIBDIR}/libzerotrain.so" at)
  if(binary STREQUAL cli AND at EQUAL -1)
    string(APPEND problems "${cli} does not load the prefix's libzerotrain:\n${resolved}\n")
  endif()
  execute_process(COMMAND "${READELF}" -d "${binary}" OUTPUT_VARIABLE dynamic TIMEOUT 60)
  string(REGEX MATCH "R(UN)?PATH\\)[^\n]*" search_path "${dynamic}")
  string(FIND "${search_path}" "${ZT_BUILD_DIR}" at)
  if(NOT at EQUAL -1)
    string(APPEND problems "${binary}'s search path names the build tree: ${search_path}\n")
  endif()
  if(binary STREQUAL cli AND NOT search_path MATCHES "\\$ORIGIN/\\.\\./${ZT_LIBDIR}")
    string(APPEND problems "${cli}'s search path is not $ORIGIN/../${ZT_LIBDIR}: ${search_path}\n")
  endif()
endforeach()

# libzerotrain needs no CUDA library (Note [The CUDA backend module]): it runs where there is
# none. The module's own search path leads to the CUDA libraries it was linked with.
execute_process(COMMAND "${READELF}" -d "${library}" OUTPUT_VARIABLE dynamic TIMEOUT 60)
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[(libcud|libcublas|libnccl)[^]]*\\]" cuda_needed
       "${dynamic}")
if(cuda_needed)
  string(APPEND problems "${library} needs CUDA's libraries itself: ${cuda_needed}\n")
endif()
if(ZT_CUDA_LIBRARY_DIR AND EXISTS "${cuda_module}")
  execute_process(COMMAND "${READELF}" -d "${cuda_module}" OUTPUT_VARIABLE dynamic TIMEOUT 60)
  string(REGEX MATCH "R(UN)?PATH\\)[^\n]*\\[([^\n]*)\\]" search_path "${dynamic}")
  string(REPLACE ":" ";" search_dirs "${CMAKE_MATCH_2}")
  file(REAL_PATH "${ZT_CUDA_LIBRARY_DIR}" cuda_dir)
  set(found FALSE)
  foreach(dir IN LISTS search_dirs)
    if(EXISTS "${dir}")
      file(REAL_PATH "${dir}" dir)
      if(dir STREQUAL cuda_dir)
        set(found TRUE)
      endif()
    endif()
  endforeach()
  if(NOT found)
    string(APPEND problems "${cuda_module}'s search path (${search_path}) lacks the CUDA "
           "libraries' folder ${ZT_CUDA_LIBRARY_DIR}\n")
  endif()
endif()

execute_process(COMMAND ${clean_env} "${cli}" --version OUTPUT_VARIABLE version_line
                ERROR_VARIABLE version_line RESULT_VARIABLE result TIMEOUT 60)
if(NOT result EQUAL 0 OR NOT version_line MATCHES "zerotrain ${ZT_VERSION}")
  string(APPEND problems "`${cli} --version` (exit ${result}) printed: ${version_line}\n")
endif()
if(problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "${cli} and ${library} run from the prefix: ${version_line}")
