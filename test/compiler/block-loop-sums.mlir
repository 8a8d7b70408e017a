// RUN: lcc-opt %s --pass-pipeline='builtin.module(gpu.module(lcc-block-loop-sums))' | FileCheck %s

// A running sum over 4096 positions becomes 64 blocks of 64, each summed
// from zero and added to the running sum with the sum's flags; the block's
// position is b * 64 + j.
// CHECK-LABEL: gpu.func @long_sum
// CHECK: %[[S:.+]] = scf.for %[[B:.+]] = %{{.+}} to %c64{{(_[0-9]+)?}} step %{{.+}} iter_args(%[[A:.+]] = %{{.+}}) -> (f32)
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.+]] = scf.for %[[J:.+]] = %{{.+}} to %[[SIZE:c64(_[0-9]+)?]] step %{{.+}} iter_args(%[[Q:.+]] = %[[Z]]) -> (f32)
// CHECK: %[[M:.+]] = arith.muli %[[B]], %[[SIZE]]
// CHECK: %[[K:.+]] = arith.addi %[[M]], %[[J]]
// CHECK: memref.load %{{.+}}[%[[K]]]
// CHECK: arith.addf %[[Q]], %{{.+}} fastmath<reassoc,contract> : f32
// CHECK: %[[N:.+]] = arith.addf %[[A]], %[[P]] fastmath<reassoc,contract> : f32
// CHECK: scf.yield %[[N]] : f32
// CHECK: memref.store %[[S]]

// Left alone: a short loop, a trip count without a divisor (4093 is
// prime), an argument used for more than its sum, and a maximum.
// CHECK-LABEL: gpu.func @short_sum
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK-NOT: scf.for
// CHECK-LABEL: gpu.func @prime_sum
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK-LABEL: gpu.func @sum_used_inside
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK-LABEL: gpu.func @running_max
// CHECK: scf.for
// CHECK-NOT: scf.for

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @long_sum(%x: memref<4096xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 4096 : index
      %init = memref.load %out[] : memref<f32>
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%k] : memref<4096xf32>
        %p = arith.mulf %v, %v fastmath<reassoc,contract> : f32
        %next = arith.addf %a, %p fastmath<reassoc,contract> : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
    gpu.func @short_sum(%x: memref<100xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 100 : index
      %init = memref.load %out[] : memref<f32>
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%k] : memref<100xf32>
        %next = arith.addf %a, %v : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
    gpu.func @prime_sum(%x: memref<4093xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 4093 : index
      %init = memref.load %out[] : memref<f32>
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%k] : memref<4093xf32>
        %next = arith.addf %a, %v : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
    gpu.func @sum_used_inside(%x: memref<4096xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 4096 : index
      %init = memref.load %out[] : memref<f32>
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%k] : memref<4096xf32>
        %scaled = arith.mulf %v, %a : f32
        %next = arith.addf %a, %scaled : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
    gpu.func @running_max(%x: memref<4096xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 4096 : index
      %init = memref.load %out[] : memref<f32>
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%k] : memref<4096xf32>
        %next = arith.maximumf %a, %v : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
  }
}
