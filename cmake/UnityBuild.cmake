# Unity builds: most of what a C++ source of lcc costs to build is the
# headers it parses and the templates it instantiates (MLIR's above all;
# clang -ftime-trace puts the frontend at 90% of CudaTarget.cpp's 29 s).
# A batch of sources built as one file pays that once, and CI builds
# everything twice from scratch (test/README.md, "Where CI's time goes").
option(LCC_UNITY_BUILD
  "Build lcc's larger libraries and tests as unity batches: a batch parses
  the headers and instantiates their templates once for its files" ON)

# lcc_unity_build(TARGET): with LCC_UNITY_BUILD, TARGET's sources build in
# batches of 8, so a batch parses the headers they share once (LCCCompiler's
# objects: 134 s on two cores one file at a time, 54 s in batches). Not for
# the attn dialect, which everything else waits for: its few large files
# build faster side by side than as one batch.
function(lcc_unity_build target)
  if(LCC_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES
      UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

