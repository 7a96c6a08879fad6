# Shows that build_consumer.cmake notices a program built from zerotrain's source tree rather
# than the prefix: the consumer project with the source tree's include directories (api/ and
# the root its headers include from) added ahead of the prefix's must fail it, naming the
# source tree.
#   cmake <build_consumer.cmake's -D options, ZT_CONSUMER_SOURCE the consumer project>
#         -P build_consumer_mutation.cmake
cmake_minimum_required(VERSION 3.25)
set(mutated "${ZT_WORK_DIR}/mutated_project")
file(REMOVE_RECURSE "${ZT_WORK_DIR}")
file(COPY "${ZT_CONSUMER_SOURCE}/" DESTINATION "${mutated}")
file(APPEND "${mutated}/CMakeLists.txt"
     "target_include_directories(${ZT_CONSUMER_TARGET} BEFORE PRIVATE \"${ZT_SOURCE_ROOT}/api\"\n"
     "                           \"${ZT_SOURCE_ROOT}\")\n")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -DZT_PREFIX=${ZT_PREFIX} -DZT_CONSUMER_SOURCE=${mutated}
          -DZT_CONSUMER_TARGET=${ZT_CONSUMER_TARGET} -DZT_EXPECT_OUTPUT=${ZT_EXPECT_OUTPUT}
          -DZT_WORK_DIR=${ZT_WORK_DIR}/check -DZT_SOURCE_ROOT=${ZT_SOURCE_ROOT} -DZT_CXX=${ZT_CXX}
          -DZT_MAKE_PROGRAM=${ZT_MAKE_PROGRAM} -DZT_LAUNCHER=${ZT_LAUNCHER}
          -DZT_MAIN_FROM_README=${ZT_MAIN_FROM_README}
          -P "${CMAKE_CURRENT_LIST_DIR}/build_consumer.cmake"
  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)
if(result EQUAL 0)
  message(FATAL_ERROR "the check accepted a program compiled with ${ZT_SOURCE_ROOT}/api:\n"
                      "${output}")
endif()
# (CMake wraps a long message at spaces: compare with all white space as one space.)
string(REGEX REPLACE "[ \t\r\n]+" " " output "${output}")
foreach(named "a compile command includes from ${ZT_SOURCE_ROOT}/api"
              "reaches a header of the source tree: ${ZT_SOURCE_ROOT}/api/zerotrain/")
  string(FIND "${output}" "${named}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check's message lacks '${named}':\n${output}")
  endif()
endforeach()
message(STATUS "the check rejected the program compiled with the source tree's headers")
