# The Debian package (make deb): what make install puts under a prefix —
# the library, the header, corealloc.pc, the CMake package, the man pages
# and the tool — under /usr. dpkg-shlibdeps works out the C library the
# binaries need; the tool is Python.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME corealloc)
set(CPACK_PACKAGE_VENDOR corealloc)
set(CPACK_PACKAGE_CONTACT "corealloc maintainers <maintainers@users.noreply.a-seed-bd66ae09.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "per-CPU (rseq) malloc for Linux, with its profiling tools")
set(CPACK_PACKAGE_DESCRIPTION
  "corealloc replaces malloc for unchanged programs (LD_PRELOAD or linking): per-CPU caches\n\
inside restartable sequences, no lock and no per-thread cache on the fast path. The package\n\
holds the shared and static libraries, corealloc.h, pkg-config and CMake files, the man pages\n\
and the corealloc tool (run, hist, trace).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS python3)
include(CPack)
