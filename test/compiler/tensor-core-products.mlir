// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads="tensor-cores=true" --canonicalize | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads --canonicalize | FileCheck %s --check-prefix=SCALAR

// A paired bf16 product (TensorBuilder::pairedMatmul), 32 x 16 of C over
// k = 32: each of the 4 warps takes 16 x 8 tiles of C (4 tiles, one each),
// loads its C fragment, runs mma.sync m16n8k16 twice over k (8 pairs a
// step), and stores the fragment. A register is two bf16 of one pair, one
// 32-bit load where the pairs are words of known alignment.
// CHECK-LABEL: gpu.func @paired_product
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %c32
// CHECK: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// CHECK: scf.for %[[TILE:.+]] = %[[WARP]] to %c4 step %c4 {
// CHECK-COUNT-4: memref.load %{{.+}} : memref<32x16xf32>
// CHECK: scf.for %[[K:.+]] = %c0 to %c16 step %c8 iter_args
// CHECK: vector.load %{{.+}} {alignment = 4 : i64} : memref<32x16x2xbf16>, vector<2xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-COUNT-4: llvm.extractvalue
// CHECK: scf.yield
// CHECK-COUNT-4: memref.store %{{.+}} : memref<32x16xf32>
// CHECK: gpu.barrier
// Without tensor cores the product is scalar loops over the threads.
// SCALAR-LABEL: gpu.func @paired_product
// SCALAR-NOT: llvm.call_intrinsic
// SCALAR: arith.mulf
#a = affine_map<(m, n, kp, j) -> (m, kp, j)>
#b = affine_map<(m, n, kp, j) -> (kp, n, j)>
#c = affine_map<(m, n, kp, j) -> (m, n)>
gpu.module @kernels {
  gpu.func @paired_product(%a: memref<32x16x2xbf16>, %b: memref<16x16x2xbf16>, %c: memref<32x16xf32>) kernel {
    linalg.generic {indexing_maps = [#a, #b, #c],
                    iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %b : memref<32x16x2xbf16>, memref<16x16x2xbf16>) outs(%c : memref<32x16xf32>) {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %p = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// A product that is not whole mma tiles either way (24 rows, 12 columns:
// neither a multiple of 16 rows by 8 columns nor, transposed, of 16
// columns by 8 rows) stays scalar.
// CHECK-LABEL: gpu.func @partial_tiles
// CHECK-NOT: llvm.call_intrinsic
// CHECK: arith.mulf
gpu.module @kernels {
  gpu.func @partial_tiles(%a: memref<24x16x2xbf16>, %b: memref<16x12x2xbf16>, %c: memref<24x12xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(m, n, kp, j) -> (m, kp, j)>, affine_map<(m, n, kp, j) -> (kp, n, j)>, affine_map<(m, n, kp, j) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %b : memref<24x16x2xbf16>, memref<16x12x2xbf16>) outs(%c : memref<24x12xf32>) {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %p = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// With tf32, an f32 product (here B indexed (n, k), as the scores' keys
// are) runs as mma.sync m16n8k8: operands rounded to tf32 (add half of
// the 13 dropped bits, then clear them), k in steps of 8.
// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads="tensor-cores=true tf32=true" --canonicalize | FileCheck %s --check-prefix=TF32
// TF32-LABEL: gpu.func @f32_product
// TF32: scf.for %{{.+}} = %c0 to %c16 step %c8 iter_args
// TF32: arith.bitcast %{{.+}} : f32 to i32
// TF32: arith.addi %{{.+}}, %c4096_i32
// TF32: arith.andi %{{.+}}, %c-8192_i32
// TF32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// Without tf32 the f32 product stays on CUDA cores.
// CHECK-LABEL: gpu.func @f32_product
// CHECK-NOT: llvm.call_intrinsic
gpu.module @kernels {
  gpu.func @f32_product(%a: memref<32x16xf32>, %b: memref<16x16xf32>, %c: memref<32x16xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>, affine_map<(m, k, n) -> (n, k)>, affine_map<(m, k, n) -> (m, n)>],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b : memref<32x16xf32>, memref<16x16xf32>) outs(%c : memref<32x16xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// The model's other products, as workgroups tile them: a batch of one
// around the product (loops of extent 1 are indexed at 0), and an output
// projection that reduces over heads and head_dim (k unit u is head u / 8,
// dim u % 8: a k step of 8 stays in one head). 16 rows of C, 16 columns,
// 32 k units: 4 tiles, one a warp, 4 k steps.
// TF32-LABEL: gpu.func @heads_product
// TF32: scf.for %{{.+}} = %c0 to %c32 step %c8 iter_args
// TF32: arith.divui %{{.+}}, %c8
// TF32-COUNT-6: memref.load
// TF32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
gpu.module @kernels {
  gpu.func @heads_product(%a: memref<1x4x16x8xf32>, %b: memref<4x8x16xf32>, %c: memref<1x16x16xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(z, m, h, d, n) -> (z, h, m, d)>, affine_map<(z, m, h, d, n) -> (h, d, n)>, affine_map<(z, m, h, d, n) -> (z, m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
        ins(%a, %b : memref<1x4x16x8xf32>, memref<4x8x16xf32>) outs(%c : memref<1x16x16xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// 8 rows of C (a workgroup of 8 tokens) by 32 columns: no 16-row tile, so
// the product runs transposed, Cᵀ = Bᵀ Aᵀ, its tiles 16 columns of C by 8
// rows: each of the 2 tiles stores C at (row = its column index, column =
// its row index).
// TF32-LABEL: gpu.func @eight_rows
// TF32: scf.for %{{.+}} = %{{.+}} to %c2 step %c4 {
// TF32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32: memref.store %{{.+}}, %{{.+}}[%[[ROW:.+]], %[[COLUMN:.+]]] : memref<8x32xf32>
gpu.module @kernels {
  gpu.func @eight_rows(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>, affine_map<(m, k, n) -> (k, n)>, affine_map<(m, k, n) -> (m, n)>],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// A view of unknown offset (a tile of a global buffer) may put a pair at an
// odd bf16 index: its pairs are loaded as two 16-bit halves.
// CHECK-LABEL: gpu.func @unaligned_pairs
// CHECK-NOT: vector.load %arg0
// CHECK: memref.load %{{.+}} : memref<32x16x2xbf16, strided<[32, 2, 1], offset: ?>>
// CHECK: arith.bitcast %{{.+}} : bf16 to i16
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
gpu.module @kernels {
  gpu.func @unaligned_pairs(%a: memref<32x16x2xbf16, strided<[32, 2, 1], offset: ?>>, %b: memref<16x16x2xbf16>, %c: memref<32x16xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(m, n, kp, j) -> (m, kp, j)>, affine_map<(m, n, kp, j) -> (kp, n, j)>, affine_map<(m, n, kp, j) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %b : memref<32x16x2xbf16, strided<[32, 2, 1], offset: ?>>, memref<16x16x2xbf16>) outs(%c : memref<32x16xf32>) {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %p = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}
