// RUN: lcc-opt %s --split-input-file --verify-diagnostics
// Every attn op refuses an attribute it does not define, naming the nearest
// it has, and a flag in the wrong spelling, naming the right one: a
// misspelling had compiled into another model ({casual = true} into a
// non-causal one, {sharedqk} into one without shared QK).

func.func @misspelled(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op has no attribute 'casual'; did you mean 'causal'?}}
  %0 = attn.attention %q, %q, %v {casual = true} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @misspelled_flag(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op has no attribute 'sharedqk'; did you mean 'shared_qk'?}}
  %0 = attn.attention %q, %q, %v {sharedqk} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @unknown(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op has no attribute 'window'; it has 'causal', 'scale', 'shared_qk'}}
  %0 = attn.attention %q, %q, %v {window = 4 : i64} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @bare_causal(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op attribute 'causal' needs a value: write 'causal = true' (or leave it out for false)}}
  %0 = attn.attention %q, %q, %v {causal} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @valued_shared_qk(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op attribute 'shared_qk' is a flag written bare: write 'shared_qk'}}
  %0 = attn.attention %q, %q, %v {shared_qk = true} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @lsh_bare_causal(%qk: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op attribute 'causal' needs a value}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 2 : i64, bucket_size = 16 : i64, causal} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @lsh_factorized_valued(%qk: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op attribute 'factorized_hash' is a flag written bare: write 'factorized_hash' or leave it out (false)}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 2 : i64, bucket_size = 16 : i64, factorized_hash = false} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

func.func @no_attributes(%x: tensor<1x8x4xf32>, %w: tensor<4x4xf32>) {
  // expected-error@+1 {{'attn.linear' op has no attribute 'bias': it takes no attributes}}
  %0 = attn.linear %x, %w {bias = true} : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @param_state(%x: tensor<1xf32>) {
  // expected-error@+1 {{'attn.param' op attribute 'state' is a flag written bare: write 'state'}}
  %0 = attn.param "m" {state = true} : tensor<4xf32>
  return
}

// -----

// The generic form is checked alike.
func.func @generic(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  // expected-error@+1 {{'attn.attention' op has no attribute 'casual'; did you mean 'causal'?}}
  %0 = "attn.attention"(%q, %q, %v) ({}, {}) {casual = true} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

// A dialect's attribute is not the op's: lcc's own pass through.
func.func @dialect_attribute(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) {
  %0 = attn.attention %q, %q, %v {causal = true, shared_qk, lcc.recomputed} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return
}

// -----

// A q/k/v multi-head body whose attention shares queries and keys never
// reads the keys: the key weight would do nothing, silently.
func.func @lsh_ignores_keys(%x: tensor<1x64x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{'attn.multi_head_attention' op has a key weight, but its body never reads the keys: 'attn.lsh_attention' shares queries and keys; drop 'key %wk' (the body then takes (query_key, value)) or attend to the keys}}
  %y = attn.multi_head_attention %x, query %w, key %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  ^bb0(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
    %o = attn.lsh_attention %q, %v {n_hashes = 2 : i64, bucket_size = 16 : i64} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
    attn.yield %o : tensor<1x2x64x8xf32>
  }
  return
}

// -----

func.func @unused_keys(%x: tensor<1x64x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{'attn.multi_head_attention' op has a key weight, but its body never reads the keys; drop 'key %wk'}}
  %y = attn.multi_head_attention %x, query %w, key %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  ^bb0(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
    %o = attn.attention %q, %v, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
    attn.yield %o : tensor<1x2x64x8xf32>
  }
  return
}
