# Shows that check_installed_layout.cmake can fail: a copy of the installed prefix passes it,
# and the same copy with a static archive added, a header of another layer added, a header
# outside the zerotrain/ root, an include by a tree path, a public header removed, or a
# third-party library in the link interface each fail it.
#   cmake <check_installed_layout.cmake's -D options> -DZT_WORK_DIR=<scratch dir>
#         -P check_installed_layout_mutation.cmake
cmake_minimum_required(VERSION 3.25)
set(checker "${CMAKE_CURRENT_LIST_DIR}/check_installed_layout.cmake")
set(copy "${ZT_WORK_DIR}/prefix")
set(targets "${copy}/${ZT_LIBDIR}/cmake/zerotrain/zerotrainTargets.cmake")

function(check_copy out_result)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DZT_PREFIX=${copy}
                          -DZT_PUBLIC_INCLUDE_ROOT=${ZT_PUBLIC_INCLUDE_ROOT}
                          -DZT_LIBDIR=${ZT_LIBDIR} -DZT_BINDIR=${ZT_BINDIR}
                          -DZT_INCLUDEDIR=${ZT_INCLUDEDIR}
                          -DZT_VERSION=${ZT_VERSION} -P "${checker}"
                  RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET TIMEOUT 60)
  set(${out_result} "${result}" PARENT_SCOPE)
endfunction()
function(fresh_copy)
  file(REMOVE_RECURSE "${copy}")
  file(COPY "${ZT_PREFIX}/" DESTINATION "${copy}")
endfunction()

fresh_copy()
check_copy(result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the check rejects an unchanged copy of ${ZT_PREFIX}")
endif()
set(mutations "static archive" "other layer's header" "header outside zerotrain/"
              "include by a tree path" "public header removed" "link interface")
foreach(mutation IN LISTS mutations)
  fresh_copy()
  if(mutation STREQUAL "static archive")
    file(WRITE "${copy}/${ZT_LIBDIR}/libzt_core.a" "")
  elseif(mutation STREQUAL "other layer's header")
    file(WRITE "${copy}/${ZT_INCLUDEDIR}/zerotrain/detail/comm/communicator.h" "#pragma once\n")
  elseif(mutation STREQUAL "header outside zerotrain/")
    file(WRITE "${copy}/${ZT_INCLUDEDIR}/core/tensor.h" "#pragma once\n")
  elseif(mutation STREQUAL "include by a tree path")
    file(APPEND "${copy}/${ZT_INCLUDEDIR}/zerotrain/engine.h" "#include \"core/error.h\"\n")
  elseif(mutation STREQUAL "public header removed")
    file(REMOVE "${copy}/${ZT_INCLUDEDIR}/zerotrain/engine.h")
  else()
    file(APPEND "${targets}" "set_target_properties(zerotrain::zerotrain PROPERTIES\n"
                             "  INTERFACE_LINK_LIBRARIES \"gloo\")\n")
  endif()
  check_copy(result)
  if(result EQUAL 0)
    message(FATAL_ERROR "the check accepted a prefix with: ${mutation}")
  endif()
endforeach()
file(REMOVE_RECURSE "${copy}")
list(LENGTH mutations count)
message(STATUS "the check rejected all ${count} mutations")
