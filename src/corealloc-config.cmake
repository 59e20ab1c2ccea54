# find_package(corealloc CONFIG): the targets corealloc::corealloc (shared)
# and corealloc::corealloc-static (the archive, which needs Threads).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include(${CMAKE_CURRENT_LIST_DIR}/corealloc-targets.cmake)
