# `cpack -G DEB`: a Debian package of what `cmake --install` installs (the CLI, libzerotrain,
# the headers under include/zerotrain/ and the CMake package), prefix /usr. Its Depends are
# computed by dpkg-shlibdeps from the shared libraries the binaries link, so they name the
# Debian packages this build was linked against; oneDNN, which libzerotrain loads at run
# time (nn/kernels/cpu/gemm_cpu.cpp), is declared by hand.
set(CPACK_PACKAGE_NAME "zerotrain")
set(CPACK_PACKAGE_VENDOR "zerotrain")
set(CPACK_PACKAGE_CONTACT "zerotrain maintainers <zerotrain@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "ZeRO-sharded training of neural networks across GPUs and nodes (CLI and C++ library)")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libdnnl2")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/package")
include(CPack)
