// RUN: lcc-opt %s --attn-lower-to-linalg="query-tile=16 key-tile=16" | FileCheck %s --implicit-check-not=32x64xf32

// Transformer-XL attention in the flash form: a segment of 32 queries after a
// memory of 32 keys, clamp_len 40, tiles of 16. The encodings of every
// distance a tile pair can meet (-31 .. 63) are gathered once into a table
// of 95 rows and one more, distances clamped into [0, 40]; each tile pair
// multiplies its band of 16 + 16 - 1 = 31 rows, rounded up to 32 (whole m16
// tiles of the tensor cores; the last row is read by no score), by the
// tile's (q + w) * scale and adds it to the block of scores along its
// diagonals. No [q_seq, k_seq] tensor. The content term is the
// flash loop over q + u, causal with the queries 32 keys late.
// CHECK-DAG: #[[DIAGONAL:.+]] = affine_map<(d0, d1) -> (d1 - d0 + 15, d1)>
// CHECK-LABEL: func @segment
// CHECK: %[[QU:.+]] = linalg.generic {{.+}} ins(%arg0, %arg4 :
// CHECK: arith.addf
// CHECK: %[[TABLE:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<2x96x8xf32>)
// CHECK: arith.addi %{{.+}}, %c-31
// CHECK: arith.minsi %{{.+}}, %c40
// CHECK: tensor.extract %arg3
// CHECK: linalg.generic {{.+}} ins(%arg0, %arg5 :
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[QU]]
// Key tiles up to the one holding the last query's position (memory + 16).
// CHECK: %[[LAST:.+]] = arith.addi %{{.+}}, %c48
// CHECK: arith.ceildivsi %[[LAST]], %c16
// CHECK: scf.for
// CHECK: %[[DOTS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: %[[BAND:.+]] = tensor.extract_slice %[[TABLE]][%{{.+}}, %{{.+}}, 0] [1, 32, 8]
// CHECK: %[[BANDDOTS:.+]] = linalg.generic {{.+}} ins(%[[BAND]], %{{.+}} : tensor<32x8xf32>, tensor<8x16xf32>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[DIAGONAL]], #{{.+}}]{{.+}} ins(%[[DOTS]], %[[BANDDOTS]] :
func.func @segment(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x64x8xf32>,
                   %v: tensor<1x2x64x8xf32>, %pos: tensor<2x64x8xf32>,
                   %u: tensor<2x8xf32>, %w: tensor<2x8xf32>) -> tensor<1x2x32x8xf32> {
  %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w {clamp_len = 40 : i64}
      : (tensor<1x2x32x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>,
         tensor<2x64x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}
