# The Debian package: `cpack -G DEB` of this build, unpacked with `dpkg -x` into an empty
# folder (no container, no root, nothing registered with dpkg), then what its user relies
# on: the control fields (name, version, a Depends naming the Debian package of every
# library libzerotrain links that one provides, and oneDNN, loaded at run time), the CLI
# running from the unpacked tree, and a sample built and trained against it with
# find_package(zerotrain) (build_consumer.cmake).
#   cmake -DZT_BUILD_DIR=<build dir> -DZT_VERSION=<version> -DZT_WORK_DIR=<scratch>
#         <build_consumer.cmake's options but ZT_PREFIX and ZT_WORK_DIR> -P check_deb_package.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${ZT_WORK_DIR}")
set(root "${ZT_WORK_DIR}/root")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE errors TIMEOUT 240)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${result}):\n${output}${errors}")
  endif()
  string(STRIP "${output}" output)
  set(run_output "${output}" PARENT_SCOPE)
endfunction()

run("cpack -G DEB" "${CMAKE_CPACK_COMMAND}" --config "${ZT_BUILD_DIR}/CPackConfig.cmake" -G DEB
    -B "${ZT_WORK_DIR}/cpack")
file(GLOB debs "${ZT_WORK_DIR}/cpack/*.deb")
list(LENGTH debs deb_count)
if(NOT deb_count EQUAL 1)
  message(FATAL_ERROR "cpack made ${deb_count} .deb files in ${ZT_WORK_DIR}/cpack: ${debs}")
endif()

set(problems "")
foreach(field Package Version Architecture Depends)
  run("reading the package's ${field}" dpkg-deb --field "${debs}" ${field})
  set(${field} "${run_output}")
endforeach()
if(NOT Package STREQUAL "zerotrain" OR NOT Version STREQUAL "${ZT_VERSION}")
  string(APPEND problems "the package is '${Package}' '${Version}', not zerotrain ${ZT_VERSION}\n")
endif()
# Depends as a list of package names, versions dropped.
string(REGEX REPLACE " *\\([^)]*\\)" "" depends "${Depends}")
string(REGEX REPLACE " *, *" ";" depends "${depends}")

run("unpacking ${debs}" dpkg -x "${debs}" "${root}")
foreach(path usr/bin/zerotrain usr/lib/libzerotrain.so usr/include/zerotrain/zerotrain.h
             usr/lib/cmake/zerotrain/zerotrainConfig.cmake)
  if(NOT EXISTS "${root}/${path}")
    string(APPEND problems "the package lacks /${path}\n")
  endif()
endforeach()

# Each library libzerotrain needs, where the loader finds it on this machine: the Debian
# package owning it must be in Depends (a library from no package, such as a CUDA toolkit
# unpacked from NVIDIA's archive, has no Debian name to declare).
run("listing the libraries libzerotrain loads" ldd "${root}/usr/lib/libzerotrain.so")
string(REGEX MATCHALL "=> (/[^ ]+)" resolved "${run_output}")
set(declared 0)
set(unpackaged "")
foreach(entry IN LISTS resolved)
  string(REGEX REPLACE "^=> " "" library "${entry}")
  file(REAL_PATH "${library}" real_library)
  execute_process(COMMAND dpkg-query --search "${real_library}" RESULT_VARIABLE owned
                  OUTPUT_VARIABLE owner ERROR_QUIET TIMEOUT 60)
  if(NOT owned EQUAL 0)
    list(APPEND unpackaged "${library}")
    continue()
  endif()
  string(REGEX REPLACE ":.*" "" owner "${owner}")  # "libgloo0: /usr/lib/..." or "pkg:amd64: ..."
  if(NOT owner IN_LIST depends)
    # A library pulled in by another library (Gloo's libibverbs) is that package's own
    # dependency; libzerotrain's direct ones must be declared.
    run("reading libzerotrain's NEEDED" objdump -p "${root}/usr/lib/libzerotrain.so")
    get_filename_component(soname "${library}" NAME)
    if(run_output MATCHES "NEEDED +${soname}")
      string(APPEND problems "Depends lacks ${owner}, which provides ${library}: ${Depends}\n")
    endif()
  else()
    math(EXPR declared "${declared} + 1")
  endif()
endforeach()
if(NOT "libdnnl2" IN_LIST depends)
  string(APPEND problems "Depends lacks libdnnl2 (oneDNN, loaded at run time): ${Depends}\n")
endif()

run("the unpacked CLI" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
    "${root}/usr/bin/zerotrain" --version)
if(NOT run_output MATCHES "^zerotrain ${ZT_VERSION}")
  string(APPEND problems "the unpacked CLI says '${run_output}'\n")
endif()
if(problems)
  message(FATAL_ERROR "${debs}:\n${problems}")
endif()

set(ZT_PREFIX "${root}/usr")
set(ZT_WORK_DIR "${ZT_WORK_DIR}/consumer")
include("${CMAKE_CURRENT_LIST_DIR}/build_consumer.cmake")
message(STATUS "${debs}: Depends: ${Depends} (${declared} of libzerotrain's libraries declared; "
               "from no Debian package: ${unpackaged})")
