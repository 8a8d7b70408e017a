// The plugin's lowering: attn-lower-to-linalg applies every registered
// form's patterns, so local.attention becomes lcc's flash form, its key
// tile loop guarded by the window's tile test.
// RUN: lcc-opt --load-plugin=%local_plugin %s --attn-lower-to-linalg="query-tile=32 key-tile=32" | FileCheck %s

// CHECK-LABEL: func @local
// CHECK-NOT: local.attention
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: scf.if
// CHECK: linalg.generic
func.func @local(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  %0 = local.attention %q, %q, %q {window = 32 : i64, look_backward = 1 : i64}
      : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
  return %0 : tensor<1x2x256x16xf32>
}
