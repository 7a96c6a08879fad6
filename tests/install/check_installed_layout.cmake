# What an installation holds: libzerotrain, the zerotrain CLI, every public header, the
# CMake package, and nothing else: no static archive, no header outside include/zerotrain/
# or including another by a path outside it, no header of a layer the public headers do not
# include, no backend or *_internal.h header, and a link interface naming no
# third-party library or layer archive; a package version of SameMajorVersion.
#   cmake -DZT_PREFIX=<prefix> -DZT_PUBLIC_INCLUDE_ROOT=<source root>/api -DZT_LIBDIR=lib
#         -DZT_BINDIR=bin -DZT_INCLUDEDIR=include -DZT_VERSION=<version>
#         -P check_installed_layout.cmake
cmake_minimum_required(VERSION 3.25)
set(problems "")
macro(expect_file path)
  if(NOT EXISTS "${ZT_PREFIX}/${path}")
    string(APPEND problems "missing ${ZT_PREFIX}/${path}\n")
  endif()
endmacro()

expect_file("${ZT_LIBDIR}/libzerotrain.so")
expect_file("${ZT_LIBDIR}/libzerotrain.so.0")
expect_file("${ZT_BINDIR}/zerotrain")
set(package "${ZT_LIBDIR}/cmake/zerotrain")
foreach(file zerotrainConfig.cmake zerotrainConfigVersion.cmake zerotrainTargets.cmake)
  expect_file("${package}/${file}")
endforeach()
file(GLOB public_headers RELATIVE "${ZT_PUBLIC_INCLUDE_ROOT}"
     "${ZT_PUBLIC_INCLUDE_ROOT}/zerotrain/*.h")
foreach(header IN LISTS public_headers)
  expect_file("${ZT_INCLUDEDIR}/${header}")
endforeach()

file(GLOB_RECURSE archives "${ZT_PREFIX}/*.a")
foreach(archive IN LISTS archives)
  string(APPEND problems "a static archive is installed: ${archive}\n")
endforeach()
# Everything installed under the include directory lives under zerotrain/ (Note [One include
# root] in cmake/install_public_headers.cmake) and names the headers it includes by their
# installed paths. The public headers reach core, data, nn and one runtime header, installed
# under zerotrain/detail/; the other layers, the kernel backends and folder-private headers
# stay in the source tree.
file(GLOB_RECURSE installed_headers RELATIVE "${ZT_PREFIX}/${ZT_INCLUDEDIR}"
     "${ZT_PREFIX}/${ZT_INCLUDEDIR}/*")
foreach(header IN LISTS installed_headers)
  if(NOT header MATCHES "^zerotrain/")
    string(APPEND problems "a header is installed outside the zerotrain/ root: ${header}\n")
  elseif(header MATCHES "^zerotrain/detail/(comm|optim|sharding|apps)/"
         OR header MATCHES "/(cpu|cuda)/" OR header MATCHES "_internal\\.h$")
    string(APPEND problems "an implementation header is installed: ${header}\n")
  endif()
  file(STRINGS "${ZT_PREFIX}/${ZT_INCLUDEDIR}/${header}" quoted_includes
       REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(include IN LISTS quoted_includes)
    if(NOT include MATCHES "#[ \t]*include[ \t]*\"zerotrain/")
      string(APPEND problems "${header} includes a header by a path outside zerotrain/: "
             "${include}\n")
    endif()
  endforeach()
endforeach()

file(GLOB target_files "${ZT_PREFIX}/${package}/zerotrainTargets*.cmake")
foreach(target_file IN LISTS target_files)
  file(STRINGS "${target_file}" interface_lines REGEX "INTERFACE_LINK_LIBRARIES|find_dependency")
  foreach(line IN LISTS interface_lines)
    string(APPEND problems "the package's link interface is not libzerotrain alone: ${line}\n")
  endforeach()
endforeach()

# SameMajorVersion: the package meets a request for its own version or an earlier one of
# its major version, and no request for another major version.
function(package_meets requested out)
  string(REPLACE "." ";" parts "${requested}")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  set(PACKAGE_FIND_VERSION "${requested}")
  include("${ZT_PREFIX}/${package}/zerotrainConfigVersion.cmake")
  set(${out} "${PACKAGE_VERSION_COMPATIBLE}" PARENT_SCOPE)
endfunction()
if(EXISTS "${ZT_PREFIX}/${package}/zerotrainConfigVersion.cmake")
  string(REGEX MATCH "^[0-9]+" major "${ZT_VERSION}")
  math(EXPR next_major "${major} + 1")
  package_meets("${ZT_VERSION}" own_version)
  package_meets("${major}.0" same_major)
  package_meets("${next_major}.0" next_major_met)
  if(NOT own_version OR NOT same_major OR next_major_met)
    string(APPEND problems "the package's version ${ZT_VERSION} is not SameMajorVersion: "
           "meets ${ZT_VERSION} ${own_version}, ${major}.0 ${same_major}, ${next_major}.0 "
           "${next_major_met}\n")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "${ZT_PREFIX}:\n${problems}")
endif()
list(LENGTH installed_headers header_count)
message(STATUS "${ZT_PREFIX} holds libzerotrain, the CLI, the package and ${header_count} headers")
