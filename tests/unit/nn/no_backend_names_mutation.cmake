# Shows that no_backend_names.cmake can fail: a copy of a real layer passes it, and the same
# copy with each forbidden name added fails it.
#   cmake -DZT_ROOT=<source root> -DZT_WORK_DIR=<scratch dir> -P no_backend_names_mutation.cmake
set(lint "${ZT_ROOT}/tests/unit/nn/no_backend_names.cmake")
file(READ "${ZT_ROOT}/nn/layers/linear.cpp" original)

function(run_lint dir out_result)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DZT_ROOT=${ZT_ROOT} -DZT_DIRS=${dir} -P "${lint}"
                  RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET TIMEOUT 60)
  set(${out_result} "${result}" PARENT_SCOPE)
endfunction()

set(clean "${ZT_WORK_DIR}/clean")
file(REMOVE_RECURSE "${clean}")
file(WRITE "${clean}/linear.cpp" "${original}")
run_lint("${clean}" result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the lint rejects an unchanged copy of nn/layers/linear.cpp")
endif()

# (no semicolons inside a mutation: it would split the list)
set(mutations "  cpu::gemm_f32(false, true, 1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1)"
              "#include \"nn/kernels/cpu/dtype_io.h\""
              "#include \"nn/kernels/cuda/gemm_cublas.h\""
              "// runs on CUDA"
              "  cublasGemmEx(handle)")
set(index 0)
foreach(mutation IN LISTS mutations)
  math(EXPR index "${index} + 1")
  set(dir "${ZT_WORK_DIR}/mutation_${index}")
  file(REMOVE_RECURSE "${dir}")
  file(WRITE "${dir}/linear.cpp" "${original}\n${mutation}\n")
  run_lint("${dir}" result)
  if(result EQUAL 0)
    message(FATAL_ERROR "the lint accepted a layer with: ${mutation}")
  endif()
endforeach()
message(STATUS "the lint rejected all ${index} mutations")
