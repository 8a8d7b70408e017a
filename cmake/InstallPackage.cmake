# lcc_install_package(NAME TARGETS_EXPORT DIR COMPATIBILITY [PATH_VARS ...]):
# installs the CMake package NAME into DIR: the exported targets (namespace
# lcc::), NAMEConfig.cmake from cmake/NAMEConfig.cmake.in and its version
# file. Used by InstallRuntime.cmake and InstallCompiler.cmake.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

function(lcc_install_package name export dir compatibility)
  install(EXPORT ${export} NAMESPACE lcc:: DESTINATION ${dir})
  configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/${name}Config.cmake.in
    ${PROJECT_BINARY_DIR}/${name}Config.cmake
    INSTALL_DESTINATION ${dir}
    PATH_VARS ${ARGN})
  write_basic_package_version_file(
    ${PROJECT_BINARY_DIR}/${name}ConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY ${compatibility})
  install(FILES ${PROJECT_BINARY_DIR}/${name}Config.cmake
                ${PROJECT_BINARY_DIR}/${name}ConfigVersion.cmake
    DESTINATION ${dir})
endfunction()
