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

// -----

// With its logsumexp (what training adds) and its backward op.
// CHECK-LABEL: func @with_backward
// CHECK: local.attention_backward
func.func @with_backward(%q: tensor<1x2x128x16xf32>, %d: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %o, %l = local.attention %q, %q, %q {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> (tensor<1x2x128x16xf32>, tensor<1x2x128xf32>)
  %dq, %dk, %dv = local.attention_backward %q, %q, %q, %o, %l, %d {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128xf32>, tensor<1x2x128x16xf32>) -> (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>)
  return %dq : tensor<1x2x128x16xf32>
}

// -----

func.func @logsumexp_of_another_shape(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-error@+1 {{expected logsumexp [batch, heads, seq] of f32, got 'tensor<1x2x64xf32>'}}
  %o, %l = local.attention %q, %q, %q {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> (tensor<1x2x128x16xf32>, tensor<1x2x64xf32>)
  return %o : tensor<1x2x128x16xf32>
}

// -----

func.func @backward_gradient_of_another_type(%q: tensor<1x2x128x16xf32>, %l: tensor<1x2x128xf32>, %d: tensor<1x2x128x8xf32>) -> tensor<1x2x128x16xf32> {
  // expected-error@+1 {{expected result_grad of the result's type 'tensor<1x2x128x16xf32>', got 'tensor<1x2x128x8xf32>'}}
  %dq, %dk, %dv = local.attention_backward %q, %q, %q, %q, %l, %d {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128xf32>, tensor<1x2x128x8xf32>) -> (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>)
  return %dq : tensor<1x2x128x16xf32>
}

// -----

func.func @backward_gradients_of_other_types(%q: tensor<1x2x128x16xf32>, %l: tensor<1x2x128xf32>) -> tensor<1x2x128x8xf32> {
  // expected-error@+1 {{expected the gradients of the query, key and value types}}
  %dq, %dk, %dv = local.attention_backward %q, %q, %q, %q, %l, %q {window = 32 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128xf32>, tensor<1x2x128x16xf32>) -> (tensor<1x2x128x8xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>)
  return %dq : tensor<1x2x128x8xf32>
}
