// RUN: lcc-opt %s --split-input-file --lcc-promote-workgroup-buffers --canonicalize --verify-diagnostics | FileCheck %s

// Each allocation becomes a 16-byte aligned slot of the dynamic shared
// memory, cast to the generic address space so its users keep their types;
// the kernel records the bytes its launch needs.
// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME: lcc.workgroup_memory_bytes = 16400 : i64
// CHECK-DAG: %[[SHM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[A:.+]] = memref.view %[[SHM]][%c0][] : {{.*}} to memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.+]] = memref.view %[[SHM]][%c16384][] : {{.*}} to memref<3xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[GA:.+]] = memref.memory_space_cast %[[A]] : {{.*}} to memref<64x64xf32>
// CHECK-DAG: %[[GB:.+]] = memref.memory_space_cast %[[B]] : {{.*}} to memref<3xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[GA]] : memref<64x64xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[GB]] : memref<3xf32>)
gpu.module @kernels {
  gpu.func @tiles() kernel {
    %zero = arith.constant 0.0 : f32
    %a = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
    %b = memref.alloc() : memref<3xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<64x64xf32>)
    linalg.fill ins(%zero : f32) outs(%b : memref<3xf32>)
    memref.dealloc %a : memref<64x64xf32>
    gpu.return
  }
}

// -----

// A buffer carried to the next iteration (a running maximum) alternates
// between two slots: even iterations write the first, odd ones the second,
// while reading the other.
// CHECK-LABEL: gpu.func @running_max
// CHECK-SAME: lcc.workgroup_memory_bytes = 768 : i64
// CHECK-DAG: %[[INIT:.+]] = memref.view %{{.+}}[%c0][]
// CHECK-DAG: %[[EVEN:.+]] = memref.view %{{.+}}[%c256][]
// CHECK-DAG: %[[ODD:.+]] = memref.view %{{.+}}[%c512][]
// CHECK-DAG: %[[GEVEN:.+]] = memref.memory_space_cast %[[EVEN]]
// CHECK-DAG: %[[GODD:.+]] = memref.memory_space_cast %[[ODD]]
// CHECK: scf.for %[[I:.+]] = %c0 to %c8 step %c1 iter_args(%[[OLD:.+]] = %{{.+}})
// CHECK: %[[WIDE:.+]] = arith.index_castui %[[I]] : index to i64
// CHECK: %[[ISODD:.+]] = arith.trunci %[[WIDE]] : i64 to i1
// CHECK: %[[NEW:.+]] = arith.select %[[ISODD]], %[[GODD]], %[[GEVEN]] : memref<64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[OLD]], %{{.+}} : {{.*}}) outs(%[[NEW]] : memref<64xf32>)
// CHECK: scf.yield %[[NEW]]
gpu.module @kernels {
  gpu.func @running_max(%x: memref<8x64xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %low = arith.constant 0xFF800000 : f32
    %init = memref.alloc() : memref<64xf32>
    linalg.fill ins(%low : f32) outs(%init : memref<64xf32>)
    %m = scf.for %i = %c0 to %c8 step %c1 iter_args(%old = %init) -> memref<64xf32> {
      %row = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1], offset: ?>>
      %new = memref.alloc() : memref<64xf32>
      linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                      iterator_types = ["parallel"]}
          ins(%old, %row : memref<64xf32>, memref<64xf32, strided<[1], offset: ?>>)
          outs(%new : memref<64xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %v = arith.maximumf %a, %b : f32
        linalg.yield %v : f32
      }
      scf.yield %new : memref<64xf32>
    }
    gpu.return
  }
}

// -----

// A dynamically sized buffer (a padded tile) gets a slot as large as its
// size's constant upper bound, viewed with its actual size.
// CHECK-LABEL: gpu.func @padded_tile
// CHECK-SAME: lcc.workgroup_memory_bytes = 512 : i64
// CHECK: %[[SIZE:.+]] = affine.min
// CHECK: memref.view %{{.+}}[%c0][%[[SIZE]]] : {{.*}} to memref<?x16xf32, #gpu.address_space<workgroup>>
gpu.module @kernels {
  gpu.func @padded_tile(%n: index) kernel {
    %zero = arith.constant 0.0 : f32
    %size = affine.min affine_map<(d0) -> (d0, 8)>(%n)
    %t = memref.alloc(%size) : memref<?x16xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<?x16xf32>)
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @unbounded(%n: index) kernel {
    // expected-error @below {{in kernel 'unbounded' has a size without a constant upper bound}}
    %t = memref.alloc(%n) : memref<?xf32>
    gpu.return
  }
}

// -----

// Buffers that do not fit the shared memory left go to the block's part of
// a global scratch array: one per kernel, workgroup (x, y, z) owning bytes
// [w * 262144, (w + 1) * 262144) with w = x + 2 * (y + 3 * z).
// CHECK: memref.global "private" @too_large_scratch : memref<1572864xi8> = uninitialized {alignment = 16 : i64}
// CHECK-LABEL: gpu.func @too_large
// CHECK-SAME: lcc.workgroup_memory_bytes = 1024 : i64
// CHECK-DAG: %[[SCRATCH:.+]] = memref.get_global @too_large_scratch
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// CHECK-DAG: gpu.block_id z
// CHECK: %[[BASE:.+]] = arith.muli %{{.+}}, %c262144
// CHECK-DAG: memref.view %{{.+}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %[[SCRATCH]][%[[BASE]]][] : memref<1572864xi8> to memref<256x256xf32>
gpu.module @kernels {
  gpu.func @too_large() kernel attributes {lcc.workgroup_count = array<i64: 2, 3, 1>} {
    %zero = arith.constant 0.0 : f32
    %t = memref.alloc() : memref<256x256xf32>
    %s = memref.alloc() : memref<256xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<256x256xf32>)
    linalg.fill ins(%zero : f32) outs(%s : memref<256xf32>)
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{needs 262144 bytes for its tile buffers, more than the 232448 of shared memory, and has no lcc.workgroup_count to size a global scratch by}}
  gpu.func @no_grid() kernel {
    %t = memref.alloc() : memref<256x256xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @nested_carry(%x: memref<64xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %init = memref.alloc() : memref<64xf32>
    %outer = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %init) -> memref<64xf32> {
      %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%p = %o) -> memref<64xf32> {
        // expected-error @below {{in kernel 'nested_carry' is carried through two nested loops, which shared-memory slots do not support yet}}
        %next = memref.alloc() : memref<64xf32>
        linalg.copy ins(%p : memref<64xf32>) outs(%next : memref<64xf32>)
        scf.yield %next : memref<64xf32>
      }
      scf.yield %inner : memref<64xf32>
    }
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @per_thread() kernel {
    // expected-error @below {{is not supported in a GPU kernel (a buffer per thread)}}
    %t = memref.alloca() : memref<4xf32>
    gpu.return
  }
}
