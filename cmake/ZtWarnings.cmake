# Compiler warnings shared by every zerotrain target; errors when ZT_WERROR is on (CI).
add_library(zt_warnings INTERFACE)
target_compile_options(zt_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wimplicit-fallthrough>)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 at -O3 reports -Wrestrict inside libstdc++'s std::string (GCC bug 105329): a
  # false positive on correct code, so it cannot be an error here.
  target_compile_options(zt_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(zt_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
endif()
if(ZT_WERROR)
  target_compile_options(zt_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
endif()

# zt_library(NAME SOURCES... DEPS ...): one layer's library with the project's settings. With
# the CUDA backend on, every target above the library sees ZT_HAVE_CUDA (so core's
# cuda_backend_built() tells the truth).
function(zt_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    # A layer that holds only headers so far: an interface target keeps the link graph.
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE "${ZT_SOURCE_ROOT}")
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC "${ZT_SOURCE_ROOT}")
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE zt_warnings ${ARG_PRIVATE_DEPS})
  if(ZT_HAVE_CUDA)
    # The build has a CUDA module (cuda_module/); the layer itself links no CUDA library.
    target_compile_definitions(${name} PUBLIC ZT_HAVE_CUDA=1)
  endif()
endfunction()

# zt_glob_sources(OUT DIR): the .cpp files of a layer folder, recursively, but those of its
# cuda/ and nccl/ folders, which the CUDA module builds (zt_cuda_sources; Note [The CUDA
# backend module] in core/device/cuda_module.h), so a layer needs no CUDA header. Globbing
# keeps a new file from needing a CMake edit; CONFIGURE_DEPENDS re-runs the glob on every
# build.
function(zt_glob_sources out dir)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${dir}/*.cpp")
  list(FILTER sources EXCLUDE REGEX "/(cuda|nccl)/")
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

# zt_cuda_sources(OUT DIR): the .cu and .cpp files of DIR's cuda/ folders (and nccl/'s).
function(zt_cuda_sources out dir)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${dir}/*.cu" "${dir}/*.cpp")
  list(FILTER sources INCLUDE REGEX "/(cuda|nccl)/")
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
