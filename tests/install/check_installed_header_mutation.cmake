# Shows that check_installed_header.cmake can fail: in a scratch prefix, a self-contained
# header passes it, and headers that include a third-party header, a header the prefix
# lacks, or a header of the source tree each fail it; and the path rule rejects every
# third-party name it lists while accepting the standard library and the prefix.
#   cmake -DZT_CXX=<compiler> -DZT_SOURCE_ROOT=<source root> -DZT_WORK_DIR=<scratch dir>
#         -P check_installed_header_mutation.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/reached_headers.cmake")
set(checker "${CMAKE_CURRENT_LIST_DIR}/check_installed_header.cmake")
set(include_dir "${ZT_WORK_DIR}/prefix/include")
file(REMOVE_RECURSE "${ZT_WORK_DIR}")

function(run_checker header out_result out_output)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DZT_CXX=${ZT_CXX} -DZT_INCLUDE_DIR=${include_dir}
                          -DZT_HEADER=${header} -DZT_SOURCE_ROOT=${ZT_SOURCE_ROOT}
                          -DZT_WORK_DIR=${ZT_WORK_DIR} -P "${checker}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)
  set(${out_result} "${result}" PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

file(WRITE "${include_dir}/zerotrain/clean.h"
     "#pragma once\n#include <vector>\n#include \"zerotrain/detail.h\"\n")
file(WRITE "${include_dir}/zerotrain/detail.h"
     "#pragma once\ninline int zt_answer() { return 42; }\n")
run_checker(zerotrain/clean.h result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the check rejects a self-contained header:\n${output}")
endif()

# Each mutation: a header's text, and what the check's message must name.
# (TOML++ and Boost are zerotrain's build dependencies, so their headers are there to find.)
file(WRITE "${include_dir}/zerotrain/uses_toml.h" "#pragma once\n#include <toml++/toml.h>\n")
file(WRITE "${include_dir}/zerotrain/uses_boost.h"
     "#pragma once\n#include \"zerotrain/detail.h\"\n#include <boost/version.hpp>\n")
file(WRITE "${include_dir}/zerotrain/uses_missing.h"
     "#pragma once\n#include \"core/not_installed.h\"\n")
file(WRITE "${include_dir}/zerotrain/uses_source_tree.h"
     "#pragma once\n#include \"${ZT_SOURCE_ROOT}/core/host_device.h\"\n")
file(WRITE "${include_dir}/zerotrain/warns.h"
     "#pragma once\ninline int zt_unused(int unused_argument) { return 0; }\n")
set(mutations "uses_toml.h=third-party header: /" "uses_boost.h=third-party header: /"
              "uses_missing.h=not_installed.h"
              "uses_source_tree.h=header of the source tree" "warns.h=unused")
foreach(mutation IN LISTS mutations)
  string(REPLACE "=" ";" mutation "${mutation}")
  list(GET mutation 0 header)
  list(GET mutation 1 named)
  run_checker(zerotrain/${header} result output)
  if(result EQUAL 0)
    message(FATAL_ERROR "the check accepted zerotrain/${header}:\n${output}")
  endif()
  # (CMake wraps a long message at spaces: compare with all white space as one space.)
  string(REGEX REPLACE "[ \t\r\n]+" " " output "${output}")
  string(FIND "${output}" "${named}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check rejected zerotrain/${header} without naming '${named}':\n"
                        "${output}")
  endif()
endforeach()

# The path rule on every name it lists, whether or not the library is installed here.
set(third_party "/usr/include/toml++/toml.hpp" "/opt/toml/include/toml.h"
                "/opt/toml11/include/toml.hpp" "/usr/include/asio.hpp"
                "/usr/include/boost/asio/io_context.hpp" "/usr/include/gloo/context.h"
                "/usr/local/cuda/include/cuda_runtime.h" "/usr/local/cuda/include/cublas_v2.h"
                "/usr/include/nccl.h" "/usr/include/x86_64-linux-gnu/cblas.h"
                "/usr/include/openblas/openblas_config.h" "/opt/dnnl/include/dnnl.hpp"
                "/opt/intel/include/oneapi/dnnl/dnnl_types.h")
foreach(header IN LISTS third_party)
  zt_check_reached_headers(problems HEADERS "${header}" OWN_ROOTS "${include_dir}"
                           SOURCE_ROOT "${ZT_SOURCE_ROOT}")
  if(NOT problems MATCHES "third-party")
    message(FATAL_ERROR "the path rule accepts ${header}")
  endif()
endforeach()
zt_check_reached_headers(problems
                         HEADERS "/usr/include/c++/12/vector" "${include_dir}/core/tensor.h"
                                 "${include_dir}/nn/kernels/kernel_backend.h"
                         OWN_ROOTS "${include_dir}" SOURCE_ROOT "${ZT_SOURCE_ROOT}")
if(problems)
  message(FATAL_ERROR "the path rule rejects the standard library or the prefix:\n${problems}")
endif()
list(LENGTH mutations header_count)
list(LENGTH third_party path_count)
message(STATUS "the check rejected all ${header_count} headers and ${path_count} paths")
