# MLIR's headers are most of what a compiler source file costs to build: a
# LowerToLinalg file takes 12 s, 4.5 s with the headers below precompiled,
# and CI builds the compiler from scratch (docs: test/README.md, "Where CI's
# time goes"). Each library precompiles them once (its own flags and
# defines) and every one of its C++ sources starts from that. Only upstream
# headers go here: they never change, so the precompiled header is built
# once per build folder.
option(LCC_PRECOMPILED_HEADERS
  "Precompile the MLIR headers the compiler's sources share" ON)

set(LCC_MLIR_COMMON_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <mlir/Transforms/DialectConversion.h>
)

# ccache keeps its hits with a precompiled header only when told that the
# header's defines and timestamp do not matter (they are the same flags).
if(LCC_PRECOMPILED_HEADERS AND CCACHE_PROGRAM)
  set(LCC_CCACHE_PCH_LAUNCHER ${CMAKE_COMMAND} -E env
    "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
    ${CCACHE_PROGRAM})
endif()

function(lcc_precompile_mlir_headers target)
  if(NOT LCC_PRECOMPILED_HEADERS)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${LCC_MLIR_COMMON_HEADERS})
  if(LCC_CCACHE_PCH_LAUNCHER)
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xclang -fno-pch-timestamp>")
    set_target_properties(${target} PROPERTIES
      CXX_COMPILER_LAUNCHER "${LCC_CCACHE_PCH_LAUNCHER}")
  endif()
endfunction()
