# `cmake --install build [--prefix DIR]`: the runtime an application
# embeds: lib/liblcc_runtime.so (the C API only), include/lcc/runtime.h and
# a CMake package, so that a program builds against an installed lcc with
#
#   find_package(lccRuntime REQUIRED CONFIG)   # -DCMAKE_PREFIX_PATH=DIR
#   target_link_libraries(app PRIVATE lcc::runtime)
#
# (docs/embedding.md). It needs neither MLIR nor LLVM, nor the compiler.
include(${CMAKE_CURRENT_LIST_DIR}/InstallPackage.cmake)

set(LCC_RUNTIME_INSTALL_CMAKE_DIR lib/cmake/lccRuntime)

install(TARGETS lcc_runtime_shared
  EXPORT lccRuntimeTargets
  LIBRARY DESTINATION lib)
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/lcc/runtime.h
  DESTINATION include/lcc)
lcc_install_package(lccRuntime lccRuntimeTargets
  ${LCC_RUNTIME_INSTALL_CMAKE_DIR} SameMinorVersion)
