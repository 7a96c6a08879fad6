# An installation from a CUDA build on a machine without CUDA's libraries: in a mount
# namespace of its own (unshare, as root), the folder holding CUDA's libraries is covered
# by an empty tmpfs, so the loader cannot find them, as on a CPU-only machine. The default
# job (configs/tiny.toml on 2 CPU ranks through the launcher) must run to its end, and
# runtime.device = "cuda" must fail saying what it could not load and what to install
# (Note [The CUDA backend module]). Says "SKIP:" (ctest's SKIP_REGULAR_EXPRESSION) where no
# namespace can be made.
#   cmake -DZT_PREFIX=<prefix> -DZT_BINDIR=bin -DZT_SOURCE_ROOT=<source root>
#         -DZT_CUDA_LIBRARY_DIR=<dir> -DZT_WORK_DIR=<scratch> -P check_runs_without_cuda.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${ZT_WORK_DIR}")
file(MAKE_DIRECTORY "${ZT_WORK_DIR}")
file(REAL_PATH "${ZT_CUDA_LIBRARY_DIR}" cuda_dir)
set(cli "${ZT_PREFIX}/${ZT_BINDIR}/zerotrain")
set(config "${ZT_SOURCE_ROOT}/configs/tiny.toml")

# Runs `command` with CUDA's folder hidden; sets hidden_output and hidden_result.
function(run_hidden)
  list(JOIN ARGN " " command)
  execute_process(
    COMMAND unshare --mount sh -c
            "mount -t tmpfs zt-no-cuda '${cuda_dir}' && ls -A '${cuda_dir}' | wc -l && ${command}"
    WORKING_DIRECTORY "${ZT_WORK_DIR}" RESULT_VARIABLE result OUTPUT_VARIABLE output
    ERROR_VARIABLE output TIMEOUT 240)
  set(hidden_output "${output}" PARENT_SCOPE)
  set(hidden_result "${result}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND unshare --mount sh -c "mount -t tmpfs zt-no-cuda '${cuda_dir}'"
                RESULT_VARIABLE can_hide OUTPUT_QUIET ERROR_VARIABLE why TIMEOUT 60)
if(NOT can_hide EQUAL 0)
  message(STATUS "SKIP: cannot hide ${cuda_dir} in a mount namespace (needs root): ${why}")
  return()
endif()

run_hidden(ldd "'${ZT_PREFIX}/lib/libzerotrain_cuda.so'")
if(NOT hidden_output MATCHES "^0\n" OR NOT hidden_output MATCHES "libcudart[^\n]*not found")
  message(FATAL_ERROR "hiding ${cuda_dir} did not hide CUDA's runtime from the module:\n"
                      "${hidden_output}")
endif()

run_hidden(env -u LD_LIBRARY_PATH "'${cli}'" launch --nproc-per-node 2 "'${config}'"
           --set "run.dir='${ZT_WORK_DIR}/run'" --set run.overwrite=true)
if(NOT hidden_result EQUAL 0 OR NOT hidden_output MATCHES "done")
  message(FATAL_ERROR "the default job failed without CUDA's libraries (exit ${hidden_result}):\n"
                      "${hidden_output}")
endif()
if(NOT EXISTS "${ZT_WORK_DIR}/run/memory.json")
  message(FATAL_ERROR "the default job left no ${ZT_WORK_DIR}/run/memory.json:\n${hidden_output}")
endif()

run_hidden(env -u LD_LIBRARY_PATH "'${cli}'" train "'${config}'" --set runtime.device=cuda
           --set "run.dir='${ZT_WORK_DIR}/cuda_run'" --set run.overwrite=true)
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${hidden_output}")
foreach(named "runtime.device = \"cuda\": cannot load zerotrain's CUDA backend"
              "libcudart.so" "install the CUDA")
  string(FIND "${flat}" "${named}" at)
  if(hidden_result EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "runtime.device = cuda without CUDA's libraries (exit ${hidden_result}) "
                        "did not say '${named}':\n${hidden_output}")
  endif()
endforeach()
message(STATUS "without ${cuda_dir}: the default job ran; runtime.device = cuda said: ${flat}")
