# Builds a program against an installed zerotrain as its user would, out of the source tree:
# copies its project into a scratch folder, configures it with CMAKE_PREFIX_PATH=<prefix>,
# builds and runs it. Fails when find_package(zerotrain) resolves anywhere but the prefix,
# when a compile command or a header the compiler read comes from zerotrain's source tree
# or a third-party library, or when the program fails or prints other than expected.
#   cmake -DZT_PREFIX=<prefix> -DZT_CONSUMER_SOURCE=<project dir> -DZT_CONSUMER_TARGET=<exe>
#         [-DZT_CONSUMER_ARGS=a|b|c (@ZT_WORK_DIR@ is the scratch folder)]
#         -DZT_EXPECT_OUTPUT=<regex> [-DZT_EXPECT_LOSS_DECREASE=ON] -DZT_WORK_DIR=<scratch>
#         -DZT_SOURCE_ROOT=<source root> -DZT_CXX=<compiler> -DZT_MAKE_PROGRAM=<ninja>
#         [-DZT_LAUNCHER=<ccache>] [-DZT_MAIN_FROM_README=<README.md>] -P build_consumer.cmake
# With ZT_MAIN_FROM_README the program's main.cpp is README's C++ example under "Use it as a
# library", so the page's smallest program is built and run as printed.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/reached_headers.cmake")
set(source "${ZT_WORK_DIR}/source")
set(build "${ZT_WORK_DIR}/build")
set(include_dir "${ZT_PREFIX}/include")
# The environment must not hand the compiler or the loader another copy of zerotrain.
set(clean_env "${CMAKE_COMMAND}" -E env --unset=CPATH --unset=CPLUS_INCLUDE_PATH
    --unset=LD_LIBRARY_PATH --unset=CMAKE_PREFIX_PATH --unset=zerotrain_DIR)

function(run_step what)
  execute_process(COMMAND ${clean_env} ${ARGN} WORKING_DIRECTORY "${ZT_WORK_DIR}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output
                  TIMEOUT 120)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${result}):\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${ZT_WORK_DIR}")
file(COPY "${ZT_CONSUMER_SOURCE}/" DESTINATION "${source}")
if(ZT_MAIN_FROM_README)
  file(READ "${ZT_MAIN_FROM_README}" readme)
  string(FIND "${readme}" "## Use it as a library" section)
  if(section EQUAL -1)
    message(FATAL_ERROR "${ZT_MAIN_FROM_README} has no section 'Use it as a library'")
  endif()
  string(SUBSTRING "${readme}" ${section} -1 readme)
  if(NOT readme MATCHES "```cpp\n([^`]*)```")
    message(FATAL_ERROR "${ZT_MAIN_FROM_README}: no ```cpp example under 'Use it as a library'")
  endif()
  file(WRITE "${source}/main.cpp" "${CMAKE_MATCH_1}")
endif()
set(launcher "")
if(ZT_LAUNCHER)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${ZT_LAUNCHER}")
endif()
run_step("configuring ${ZT_CONSUMER_SOURCE} against ${ZT_PREFIX}"
         "${CMAKE_COMMAND}" -S "${source}" -B "${build}" -G Ninja
         "-DCMAKE_MAKE_PROGRAM=${ZT_MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${ZT_CXX}" ${launcher}
         -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${ZT_PREFIX}"
         -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
         -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
file(STRINGS "${build}/CMakeCache.txt" package_dir REGEX "^zerotrain_DIR:")
string(REGEX REPLACE "^[^=]*=" "" package_dir "${package_dir}")
file(REAL_PATH "${package_dir}" package_dir)
file(REAL_PATH "${ZT_PREFIX}" real_prefix)
cmake_path(IS_PREFIX real_prefix "${package_dir}" NORMALIZE package_in_prefix)
if(NOT package_in_prefix)
  message(FATAL_ERROR "find_package(zerotrain) found ${package_dir}, not ${ZT_PREFIX}'s")
endif()
run_step("building ${ZT_CONSUMER_TARGET}" "${CMAKE_COMMAND}" --build "${build}")

# Each compile command's include flags name the prefix alone, and nothing else in it names
# the source tree (the prefix and the scratch folder may lie inside it: a build tree's).
set(problems "")
file(READ "${build}/compile_commands.json" commands_json)
string(JSON command_count LENGTH "${commands_json}")
math(EXPR last "${command_count} - 1")
foreach(index RANGE ${last})
  string(JSON command GET "${commands_json}" ${index} command)
  string(REGEX MATCHALL "(-I|-isystem )[^ ]+" include_flags "${command}")
  foreach(flag IN LISTS include_flags)
    string(REGEX REPLACE "^(-I|-isystem )" "" dir "${flag}")
    cmake_path(IS_PREFIX include_dir "${dir}" NORMALIZE in_prefix)
    if(NOT in_prefix)
      string(APPEND problems "a compile command includes from ${dir}: ${command}\n")
    endif()
  endforeach()
  string(REPLACE "${ZT_PREFIX}" "" rest "${command}")
  string(REPLACE "${ZT_WORK_DIR}" "" rest "${rest}")
  string(FIND "${rest}" "${ZT_SOURCE_ROOT}" at)
  if(NOT at EQUAL -1)
    string(APPEND problems "a compile command names the source tree: ${command}\n")
  endif()
endforeach()
# The headers the compiler read, as Ninja recorded them (relative to the build folder).
run_step("listing the headers read" "${ZT_MAKE_PROGRAM}" -C "${build}" -t deps)
string(REGEX MATCHALL "\n[ \t]+[^\n]+" reached "${step_output}")
list(TRANSFORM reached STRIP)
list(LENGTH reached reached_count)
if(reached_count EQUAL 0)
  message(FATAL_ERROR "ninja recorded no headers for ${build}:\n${step_output}")
endif()
zt_check_reached_headers(header_problems HEADERS ${reached}
                         OWN_ROOTS "${include_dir}" "${ZT_WORK_DIR}"
                         SOURCE_ROOT "${ZT_SOURCE_ROOT}" BASE_DIRECTORY "${build}")
string(APPEND problems "${header_problems}")
if(problems)
  message(FATAL_ERROR "${problems}")
endif()

set(program_args "")
if(ZT_CONSUMER_ARGS)
  string(CONFIGURE "${ZT_CONSUMER_ARGS}" program_args @ONLY)
  string(REPLACE "|" ";" program_args "${program_args}")
endif()
run_step("running ${ZT_CONSUMER_TARGET}" "${build}/${ZT_CONSUMER_TARGET}" ${program_args})
if(NOT step_output MATCHES "${ZT_EXPECT_OUTPUT}")
  message(FATAL_ERROR "${ZT_CONSUMER_TARGET} printed no match for '${ZT_EXPECT_OUTPUT}':\n"
                      "${step_output}")
endif()
if(ZT_EXPECT_LOSS_DECREASE)
  if(NOT step_output MATCHES "first loss ([0-9.]+) last loss ([0-9.]+)")
    message(FATAL_ERROR "${ZT_CONSUMER_TARGET} printed no first and last loss:\n${step_output}")
  endif()
  if(NOT CMAKE_MATCH_2 LESS CMAKE_MATCH_1)
    message(FATAL_ERROR "the loss did not decrease:\n${step_output}")
  endif()
endif()
message(STATUS "${ZT_CONSUMER_TARGET}, built against ${ZT_PREFIX} alone (${reached_count} "
               "headers read), printed:\n${step_output}")
