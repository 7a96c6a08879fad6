# What a program built against the installed zerotrain may reach through its includes: the
# standard library, the prefix's headers and its own, never a third-party library's header
# (Gloo, Asio, TOML++, CUDA, BLAS, oneDNN are libzerotrain's business, not its users') nor
# a header of zerotrain's source tree. include()d by the install tests' scripts.

# Names a third-party header's path holds (matched in lower case).
set(ZT_THIRD_PARTY_HEADER_REGEX
    "(toml\\+\\+|toml\\.h(pp)?$|asio|boost|gloo|cuda|cublas|nccl|cblas|openblas|dnnl|oneapi)")

# zt_read_depfile(FILE OUT): the files a make-style dependency file (-MD, -MM) lists.
function(zt_read_depfile depfile out)
  file(READ "${depfile}" rule)
  string(REGEX REPLACE "^[^:]*:" "" rule "${rule}")
  string(REPLACE "\\\n" " " rule "${rule}")
  string(REGEX REPLACE "[ \t\r\n]+" ";" files "${rule}")
  list(FILTER files EXCLUDE REGEX "^$")
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# zt_check_reached_headers(OUT HEADERS <paths> OWN_ROOTS <dirs> SOURCE_ROOT <dir>
#                          [BASE_DIRECTORY <dir>]): OUT is one line per header that breaks
# the rule, empty when none does. OWN_ROOTS are the include prefix and the program's own
# folder (they may lie inside SOURCE_ROOT, as a prefix in the build tree does); a header
# under one is judged by its path below it. Relative paths are from BASE_DIRECTORY.
function(zt_check_reached_headers out)
  cmake_parse_arguments(ARG "" "SOURCE_ROOT;BASE_DIRECTORY" "HEADERS;OWN_ROOTS" ${ARGN})
  if(NOT ARG_BASE_DIRECTORY)
    set(ARG_BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(problems "")
  foreach(header IN LISTS ARG_HEADERS)
    cmake_path(ABSOLUTE_PATH header BASE_DIRECTORY "${ARG_BASE_DIRECTORY}" NORMALIZE)
    set(judged "${header}")
    set(own FALSE)
    foreach(root IN LISTS ARG_OWN_ROOTS)
      cmake_path(IS_PREFIX root "${header}" NORMALIZE under_root)
      if(under_root)
        cmake_path(RELATIVE_PATH header BASE_DIRECTORY "${root}" OUTPUT_VARIABLE judged)
        set(own TRUE)
        break()
      endif()
    endforeach()
    string(TOLOWER "${judged}" judged)
    cmake_path(IS_PREFIX ARG_SOURCE_ROOT "${header}" NORMALIZE in_source_tree)
    if(judged MATCHES "${ZT_THIRD_PARTY_HEADER_REGEX}")
      string(APPEND problems "reaches a third-party header: ${header}\n")
    elseif(in_source_tree AND NOT own)
      string(APPEND problems "reaches a header of the source tree: ${header}\n")
    endif()
  endforeach()
  set(${out} "${problems}" PARENT_SCOPE)
endfunction()
