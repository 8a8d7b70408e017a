# `cmake --install build [--prefix DIR]`: the tools, lcc's shared libraries,
# their headers (sources and generated .inc files, under include/lcc) and a
# CMake package, so that a plugin builds out of tree with
#
#   find_package(lcc REQUIRED CONFIG)   # -DCMAKE_PREFIX_PATH=DIR
#   target_link_libraries(my-plugin PRIVATE lcc::LCCPasses lcc::LCCPlugin)
#
# (docs/pass-authoring.md).
include(${CMAKE_CURRENT_LIST_DIR}/InstallPackage.cmake)

set(LCC_INSTALL_INCLUDE_DIR include/lcc)
set(LCC_INSTALL_CMAKE_DIR lib/cmake/lcc)

foreach(library LCCAttnDialect LCCPasses LCCCompiler)
  target_include_directories(${library} PUBLIC
    $<INSTALL_INTERFACE:${LCC_INSTALL_INCLUDE_DIR}>)
endforeach()

install(TARGETS LCCAttnDialect LCCPasses LCCCompiler LCCPlugin
  EXPORT lccTargets
  LIBRARY DESTINATION lib)
install(TARGETS lcc lcc-opt lcc-run lcc-train lcc-generate RUNTIME DESTINATION bin)
# lcc-testdata makes the random inputs of the README's quick start.
if(TARGET lcc-testdata)
  install(TARGETS lcc-testdata RUNTIME DESTINATION bin)
endif()
install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/lcc-bench DESTINATION bin)
install(FILES ${CMAKE_BINARY_DIR}/bin/lcc_bench_peers.py DESTINATION bin)
foreach(dir dialects passes compiler)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
    DESTINATION ${LCC_INSTALL_INCLUDE_DIR}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${dir}
    DESTINATION ${LCC_INSTALL_INCLUDE_DIR}
    FILES_MATCHING PATTERN "*.h.inc"
    PATTERN "CMakeFiles" EXCLUDE)
endforeach()

lcc_install_package(lcc lccTargets ${LCC_INSTALL_CMAKE_DIR} ExactVersion
  LCC_INSTALL_INCLUDE_DIR)
