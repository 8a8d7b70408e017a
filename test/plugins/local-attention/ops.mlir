// The local dialect's op parses, prints and verifies once the plugin is
// loaded; without it the op is unknown.
// RUN: lcc-opt --load-plugin=%local_plugin %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not lcc-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=UNLOADED
// UNLOADED: Dialect `local' not found

// CHECK-LABEL: func @round_trip
// CHECK: local.attention %{{.*}}, %{{.*}}, %{{.*}} {look_forward = 1 : i64, window = 32 : i64}
func.func @round_trip(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %0 = local.attention %q, %q, %q {window = 32 : i64, look_backward = 1 : i64, look_forward = 1 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// -----

func.func @zero_window(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-error@+1 {{expected window >= 1, got 0}}
  %0 = local.attention %q, %q, %q {window = 0 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// -----

func.func @keys_of_another_length(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-error@+1 {{expected query and key of one shape}}
  %0 = local.attention %q, %k, %k {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}
