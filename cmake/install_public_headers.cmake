# Run by `cmake --install` (see ZtInstall.cmake), not at configure time: installs every
# public header api/zerotrain/*.h under <prefix>/include/zerotrain/, and each zerotrain
# header it includes, transitively, under <prefix>/include/zerotrain/detail/ with its path
# from the source root (zerotrain/detail/core/tensor.h). Note [One include root].
# The compiler lists the includes (-MM), so the list is that of the sources being installed.
# Expects ZT_CXX_COMPILER, ZT_SOURCE_ROOT, ZT_PUBLIC_INCLUDE_ROOT (api/), ZT_WORK_DIR and
# ZT_INSTALL_INCLUDEDIR.
# Included into cmake_install.cmake, which sets no policies: this script sets its own.
#
# Note [One include root]
# ~~~~~~~~~~~~~~~~~~~~~~~
# In the source tree a layer's header is named by its tree path ("core/tensor.h"): short,
# and the layers' folders are the architecture. Installed under those names the headers
# would sit in generic top-level folders (<prefix>/include/core/...) where any other
# project's may collide. So the installed copies live under one root, zerotrain/, and the
# internal ones under zerotrain/detail/: each installed header's own quoted includes are
# rewritten on the way ("core/tensor.h" -> "zerotrain/detail/core/tensor.h"). The rewrite
# touches #include lines only and refuses an include it cannot place; the install tests
# compile every installed header alone against the prefix and reject any installed file
# outside zerotrain/ or any quoted include that is not under zerotrain/.
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

# Two installs may run at once (the install tests' prefix, cpack's staging): each works in a
# folder of its own destination's.
string(MD5 destination_key "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(ZT_WORK_DIR "${ZT_WORK_DIR}/${destination_key}")

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

# Each header's install path below the include directory, keyed by its source path.
set(install_paths "")
foreach(header IN LISTS headers)
  cmake_path(ABSOLUTE_PATH header NORMALIZE)
  cmake_path(IS_PREFIX ZT_PUBLIC_INCLUDE_ROOT "${header}" NORMALIZE in_public_root)
  cmake_path(IS_PREFIX ZT_SOURCE_ROOT "${header}" NORMALIZE in_source_root)
  if(in_public_root)
    cmake_path(RELATIVE_PATH header BASE_DIRECTORY "${ZT_PUBLIC_INCLUDE_ROOT}"
               OUTPUT_VARIABLE relative)
  elseif(in_source_root)
    cmake_path(RELATIVE_PATH header BASE_DIRECTORY "${ZT_SOURCE_ROOT}" OUTPUT_VARIABLE relative)
    set(relative "zerotrain/detail/${relative}")
  else()
    message(FATAL_ERROR "a public header includes ${header}, outside zerotrain's sources: "
                        "public headers may include only the standard library and zerotrain")
  endif()
  list(APPEND installed_headers "${header}")
  list(APPEND install_paths "${relative}")
endforeach()

# The install path of the header that `#include "name"` in `including` reaches: the
# compiler looked in the including file's folder first, then in the include roots.
function(zt_install_path_of name including out)
  cmake_path(GET including PARENT_PATH including_dir)
  foreach(root IN ITEMS "${including_dir}" "${ZT_PUBLIC_INCLUDE_ROOT}" "${ZT_SOURCE_ROOT}")
    set(candidate "${root}/${name}")
    cmake_path(NORMAL_PATH candidate)
    list(FIND installed_headers "${candidate}" index)
    if(index GREATER_EQUAL 0)
      list(GET install_paths ${index} path)
      set(${out} "${path}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${including} includes \"${name}\", which is none of the headers "
                      "being installed: the install cannot place it under zerotrain/")
endfunction()

set(staging "${ZT_WORK_DIR}/staged")
file(REMOVE_RECURSE "${staging}")
set(count 0)
foreach(header install_path IN ZIP_LISTS installed_headers install_paths)
  file(READ "${header}" text)
  string(REGEX MATCHALL "#include \"[^\"]+\"" includes "${text}")
  list(REMOVE_DUPLICATES includes)
  foreach(include IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\"$" "\\1" name "${include}")
    zt_install_path_of("${name}" "${header}" path)
    string(REPLACE "${include}" "#include \"${path}\"" text "${text}")
  endforeach()
  file(WRITE "${staging}/${install_path}" "${text}")
  cmake_path(GET install_path PARENT_PATH install_dir)
  file(INSTALL FILES "${staging}/${install_path}"
       DESTINATION "${CMAKE_INSTALL_PREFIX}/${ZT_INSTALL_INCLUDEDIR}/${install_dir}")
  math(EXPR count "${count} + 1")
endforeach()
message(STATUS "Installed ${count} headers: <zerotrain/...> and, under zerotrain/detail/, "
               "the headers they include")
cmake_policy(POP)
