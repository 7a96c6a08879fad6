# `cmake --install`: libzerotrain, the zerotrain CLI, the public headers <zerotrain/...> with
# the internal headers they include, and the CMake package behind find_package(zerotrain).
# The package links nothing but libzerotrain: the layers' archives are inside it and the
# third-party libraries are its own dependencies, so a consumer finds no other package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ZT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/zerotrain")

# The installed library finds the shared libraries it links (CUDA's, NCCL, Gloo) in the
# directories it was linked from, as the build tree's copy does; the CLI finds libzerotrain
# beside its own folder, wherever the prefix is moved.
file(RELATIVE_PATH zt_bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
set_target_properties(zerotrain_library PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(zerotrain PROPERTIES INSTALL_RPATH "$ORIGIN/${zt_bin_to_lib}")

install(TARGETS zerotrain_library EXPORT zerotrainTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(TARGETS zerotrain RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
# The CUDA module, beside libzerotrain where it looks for it (Note [The CUDA backend module]).
if(TARGET zerotrain_cuda)
  install(TARGETS zerotrain_cuda LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()

# The headers are listed when installing, by the compiler itself, so an include added to
# any header reached from <zerotrain/...> is installed without editing a list here.
install(CODE "
  set(ZT_CXX_COMPILER \"${CMAKE_CXX_COMPILER}\")
  set(ZT_SOURCE_ROOT \"${ZT_SOURCE_ROOT}\")
  set(ZT_PUBLIC_INCLUDE_ROOT \"${ZT_SOURCE_ROOT}/api\")
  set(ZT_WORK_DIR \"${CMAKE_CURRENT_BINARY_DIR}/zt_install_headers\")
  set(ZT_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/install_public_headers.cmake\")")

install(EXPORT zerotrainTargets NAMESPACE zerotrain:: FILE zerotrainTargets.cmake
        DESTINATION "${ZT_INSTALL_CMAKEDIR}")
set(ZT_PACKAGE_CUDA_BACKEND OFF)
if(ZT_HAVE_CUDA)
  set(ZT_PACKAGE_CUDA_BACKEND ON)
endif()
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/zerotrainConfig.cmake.in"
                              "${CMAKE_CURRENT_BINARY_DIR}/zerotrainConfig.cmake"
                              INSTALL_DESTINATION "${ZT_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/zerotrainConfigVersion.cmake"
                                 COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/zerotrainConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/zerotrainConfigVersion.cmake"
        DESTINATION "${ZT_INSTALL_CMAKEDIR}")
