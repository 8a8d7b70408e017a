# `cmake --install build [--prefix DIR]`: the runtime an application
# embeds: lib/liblcc_runtime.so (the C API only), include/lcc/runtime.h and
# a CMake package, so that a program builds against an installed lcc with
#
#   find_package(lccRuntime REQUIRED CONFIG)   # -DCMAKE_PREFIX_PATH=DIR
#   target_link_libraries(app PRIVATE lcc::runtime)
#
# (docs/embedding.md). It needs neither MLIR nor LLVM, nor the compiler.
include(CMakePackageConfigHelpers)

set(LCC_RUNTIME_INSTALL_CMAKE_DIR lib/cmake/lccRuntime)

install(TARGETS lcc_runtime_shared
  EXPORT lccRuntimeTargets
  LIBRARY DESTINATION lib)
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/lcc/runtime.h
  DESTINATION include/lcc)
install(EXPORT lccRuntimeTargets NAMESPACE lcc::
  DESTINATION ${LCC_RUNTIME_INSTALL_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/lccRuntimeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lccRuntimeConfig.cmake
  INSTALL_DESTINATION ${LCC_RUNTIME_INSTALL_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lccRuntimeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lccRuntimeConfig.cmake
              ${PROJECT_BINARY_DIR}/lccRuntimeConfigVersion.cmake
  DESTINATION ${LCC_RUNTIME_INSTALL_CMAKE_DIR})
