# Compiles a translation unit holding only `#include <HEADER>` against an installed include
# directory alone (-std=c++20, -Werror and the warnings zerotrain's own code compiles with:
# a user may include it with -I rather than -isystem) and fails when the header needs
# anything not installed or reaches a third-party header (reached_headers.cmake).
#   cmake -DZT_CXX=<compiler> -DZT_INCLUDE_DIR=<prefix>/include -DZT_HEADER=zerotrain/engine.h
#         -DZT_SOURCE_ROOT=<source root> -DZT_WORK_DIR=<scratch dir> -P check_installed_header.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/reached_headers.cmake")

string(MAKE_C_IDENTIFIER "${ZT_HEADER}" unit_name)
set(unit "${ZT_WORK_DIR}/${unit_name}.cpp")
file(REMOVE "${ZT_WORK_DIR}/${unit_name}.o" "${ZT_WORK_DIR}/${unit_name}.d")
file(WRITE "${unit}" "#include <${ZT_HEADER}>\n")
# The environment's include paths would let a header find what the prefix lacks.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env --unset=CPATH --unset=CPLUS_INCLUDE_PATH
          "${ZT_CXX}" -std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
          -Wold-style-cast -Wcast-align -Woverloaded-virtual -Werror -I "${ZT_INCLUDE_DIR}"
          -MD -MF "${ZT_WORK_DIR}/${unit_name}.d" -c "${unit}" -o "${ZT_WORK_DIR}/${unit_name}.o"
  RESULT_VARIABLE result ERROR_VARIABLE compiler_output OUTPUT_VARIABLE compiler_output
  TIMEOUT 120)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "<${ZT_HEADER}> does not compile against ${ZT_INCLUDE_DIR} alone "
                      "(a header it includes is not installed, or it is not self-contained):\n"
                      "${compiler_output}")
endif()

zt_read_depfile("${ZT_WORK_DIR}/${unit_name}.d" reached)
list(REMOVE_ITEM reached "${unit}")
zt_check_reached_headers(problems HEADERS ${reached} OWN_ROOTS "${ZT_INCLUDE_DIR}"
                         SOURCE_ROOT "${ZT_SOURCE_ROOT}")
if(problems)
  message(FATAL_ERROR "<${ZT_HEADER}>:\n${problems}")
endif()
list(LENGTH reached count)
message(STATUS "<${ZT_HEADER}> compiles alone against ${ZT_INCLUDE_DIR}; ${count} headers "
               "reached, none third-party")
