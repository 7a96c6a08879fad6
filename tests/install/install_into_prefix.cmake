# The install tests' fixture: `cmake --install` of this build into an emptied prefix, so
# that a header no longer installed cannot linger there from an earlier run.
#   cmake -DZT_BUILD_DIR=<build dir> -DZT_PREFIX=<prefix> -P install_into_prefix.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${ZT_PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${ZT_BUILD_DIR}" --prefix "${ZT_PREFIX}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${ZT_BUILD_DIR} --prefix ${ZT_PREFIX} failed (build the "
                      "zerotrain and zerotrain_library targets first):\n${output}")
endif()
message(STATUS "installed into ${ZT_PREFIX}")
