//===- SharedWorkTest.cpp - the kernel report's shared-memory count -------===//
//
// countBlockSharedWork turns a kernel's loops into warp-wide instructions:
// a loop spread over the threads to N is ceil(N / 32) of them, over the
// warps N, block-wide code one per warp; shared-memory accesses in 128-byte
// wavefronts, global ones not at all. A wrong count is a wrong bound in
// every report, so each rule is checked on a hand-written kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

constexpr const char *kKernel = R"mlir(
gpu.module @kernels {
  gpu.func @k(%global: memref<4096xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c4096 = arith.constant 4096 : index
    %f = arith.constant 0.0 : f32
    %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %view = memref.view %base[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %view : memref<4096xf32, #gpu.address_space<workgroup>> to memref<4096xf32>
    %tid = gpu.thread_id x
    %warp = arith.divui %tid, %c32 : index
    // Spread over the threads to 4096: 128 warp-wide stores; the global
    // loads are not shared memory.
    scf.for %i = %tid to %c4096 step %c128 {
      %x = memref.load %global[%i] : memref<4096xf32>
      memref.store %x, %shared[%i] : memref<4096xf32>
    }
    // 64 threads, 64 steps each: 2 warps x 64 = 128 loads.
    scf.for %i = %tid to %c64 step %c128 {
      scf.for %k = %c0 to %c64 step %c1 {
        %y = memref.load %shared[%k] : memref<4096xf32>
      }
    }
    // Spread over the warps to 4, 2 steps each: 8 mma.sync.
    scf.for %t = %warp to %c4 step %c4 {
      scf.for %k = %c0 to %c2 step %c1 {
        %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"(%f, %f) : (f32, f32) -> f32
      }
    }
    // Block-wide: each of the 4 warps loads 32 x 8 bytes, 2 wavefronts.
    %v = vector.load %shared[%c0] : memref<4096xf32>, vector<2xf32>
    gpu.return
  }
}
)mlir";

TEST(SharedWork, CountsWarpInstructionsThroughSpreadLoops) {
  MLIRContext context;
  context.loadDialect<arith::ArithDialect, gpu::GPUDialect,
                      LLVM::LLVMDialect, memref::MemRefDialect,
                      scf::SCFDialect, vector::VectorDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  gpu::GPUFuncOp kernel;
  module->walk([&](gpu::GPUFuncOp f) { kernel = f; });
  ASSERT_TRUE(kernel);
  lcc::BlockSharedWork work = lcc::countBlockSharedWork(kernel, 128);
  EXPECT_DOUBLE_EQ(work.mmas, 8);
  EXPECT_DOUBLE_EQ(work.sharedAccesses, 128 + 128 + 4 * 2);
  EXPECT_TRUE(work.exact);
}

} // namespace
