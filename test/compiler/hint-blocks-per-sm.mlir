// RUN: lcc-opt %s --split-input-file --lcc-hint-blocks-per-sm | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-hint-blocks-per-sm="arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: lcc-opt %s --split-input-file --lcc-hint-blocks-per-sm="block-size=256" | FileCheck %s --check-prefix=WIDE
// RUN: not lcc-opt %s --lcc-hint-blocks-per-sm="arch=sm_61" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not lcc-opt %s --lcc-hint-blocks-per-sm="block-size=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not lcc-opt %s --lcc-hint-blocks-per-sm="block-size=2048" 2>&1 | FileCheck %s --check-prefix=WIDEST

// An sm_90 SM holds 16 blocks of 128 threads and 228 KiB of shared memory,
// 1 KiB of it reserved per block. A kernel whose shared memory allows
// fewer blocks is told how many when that leaves ptxas at least 96
// registers a thread (at most 5 blocks of 128 threads).
// CHECK-LABEL: gpu.func @one_block
// CHECK-SAME: nvvm.minctasm = 1 : i32
// CHECK-LABEL: gpu.func @two_blocks
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK-LABEL: gpu.func @five_blocks
// CHECK-SAME: nvvm.minctasm = 5 : i32
// Six blocks would leave 85 registers: not told.
// CHECK-LABEL: gpu.func @six_blocks
// CHECK-NOT: nvvm.minctasm
// CHECK-LABEL: gpu.func @no_shared_memory
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.return

// sm_80: 164 KiB an SM; 40 KiB kernels fit 4.
// SM80-LABEL: gpu.func @one_block
// SM80-SAME: nvvm.minctasm = 1 : i32
// SM80-LABEL: gpu.func @five_blocks
// SM80-SAME: nvvm.minctasm = 4 : i32

// 256 threads: 5 blocks would leave 51 registers.
// WIDE-LABEL: gpu.func @two_blocks
// WIDE-SAME: nvvm.minctasm = 2 : i32
// WIDE-LABEL: gpu.func @five_blocks
// WIDE-NOT: nvvm.minctasm
// WIDE: gpu.return

// ARCH: error: lcc-hint-blocks-per-sm: unknown CUDA architecture 'sm_61'; expected one of sm_75, sm_80
// BLOCK: error: lcc-hint-blocks-per-sm: expected block-size >= 1, got 0
// WIDEST: error: lcc-hint-blocks-per-sm: expected block-size <= 1024, got 2048
gpu.module @kernels {
  gpu.func @one_block() kernel attributes {lcc.workgroup_memory_bytes = 150000 : i64} {
    gpu.return
  }
  gpu.func @two_blocks() kernel attributes {lcc.workgroup_memory_bytes = 90726 : i64} {
    gpu.return
  }
  gpu.func @five_blocks() kernel attributes {lcc.workgroup_memory_bytes = 40960 : i64} {
    gpu.return
  }
  gpu.func @six_blocks() kernel attributes {lcc.workgroup_memory_bytes = 32768 : i64} {
    gpu.return
  }
  gpu.func @no_shared_memory() kernel attributes {lcc.workgroup_memory_bytes = 0 : i64} {
    gpu.return
  }
}
