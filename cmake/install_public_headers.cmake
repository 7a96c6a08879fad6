# Run by `cmake --install` (see ZtInstall.cmake), not at configure time: installs every
# public header api/zerotrain/*.h and each zerotrain header it includes, transitively, under
# <prefix>/include with its path from its include root (core/tensor.h, zerotrain/engine.h),
# so the installed headers' own includes resolve. The compiler lists the includes (-MM), so
# the list is that of the sources being installed. Expects ZT_CXX_COMPILER, ZT_SOURCE_ROOT,
# ZT_PUBLIC_INCLUDE_ROOT (api/), ZT_WORK_DIR and ZT_INSTALL_INCLUDEDIR.
# Included into cmake_install.cmake, which sets no policies: this script sets its own.
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

file(GLOB public_headers RELATIVE "${ZT_PUBLIC_INCLUDE_ROOT}"
     "${ZT_PUBLIC_INCLUDE_ROOT}/zerotrain/*.h")
if(NOT public_headers)
  message(FATAL_ERROR "no public headers under ${ZT_PUBLIC_INCLUDE_ROOT}/zerotrain")
endif()
set(unit "${ZT_WORK_DIR}/all_public_headers.cpp")
set(unit_text "")
foreach(header IN LISTS public_headers)
  string(APPEND unit_text "#include <${header}>\n")
endforeach()
file(WRITE "${unit}" "${unit_text}")

# -MM leaves out the headers found in the system directories: the standard library's, and
# any third-party header, which is no part of the installation (the installed header tests
# reject a public header that reaches one).
execute_process(
  COMMAND "${ZT_CXX_COMPILER}" -std=c++20 -MM -I "${ZT_PUBLIC_INCLUDE_ROOT}"
          -I "${ZT_SOURCE_ROOT}" "${unit}"
  OUTPUT_VARIABLE dependency_rule ERROR_VARIABLE compiler_errors RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "listing the headers the public headers include failed:\n"
                      "${compiler_errors}")
endif()
# "all_public_headers.o: a.cpp b.h \\\n c.h": drop the target and the unit, keep the headers.
string(REGEX REPLACE "^[^:]*:" "" dependency_rule "${dependency_rule}")
string(REPLACE "\\\n" " " dependency_rule "${dependency_rule}")
string(REGEX REPLACE "[ \t\r\n]+" ";" headers "${dependency_rule}")
list(FILTER headers EXCLUDE REGEX "^$")
list(REMOVE_ITEM headers "${unit}")

set(count 0)
foreach(header IN LISTS headers)
  cmake_path(ABSOLUTE_PATH header NORMALIZE)
  cmake_path(IS_PREFIX ZT_PUBLIC_INCLUDE_ROOT "${header}" NORMALIZE in_public_root)
  cmake_path(IS_PREFIX ZT_SOURCE_ROOT "${header}" NORMALIZE in_source_root)
  if(in_public_root)
    cmake_path(RELATIVE_PATH header BASE_DIRECTORY "${ZT_PUBLIC_INCLUDE_ROOT}"
               OUTPUT_VARIABLE relative)
  elseif(in_source_root)
    cmake_path(RELATIVE_PATH header BASE_DIRECTORY "${ZT_SOURCE_ROOT}" OUTPUT_VARIABLE relative)
  else()
    message(FATAL_ERROR "a public header includes ${header}, outside zerotrain's sources: "
                        "public headers may include only the standard library and zerotrain")
  endif()
  cmake_path(GET relative PARENT_PATH relative_dir)
  file(INSTALL FILES "${header}"
       DESTINATION "${CMAKE_INSTALL_PREFIX}/${ZT_INSTALL_INCLUDEDIR}/${relative_dir}")
  math(EXPR count "${count} + 1")
endforeach()
message(STATUS "Installed ${count} headers: <zerotrain/...> and the headers they include")
cmake_policy(POP)
