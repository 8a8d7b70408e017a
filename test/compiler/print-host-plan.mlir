// RUN: lcc-opt %s --split-input-file --lcc-print-host-plan -o /dev/null | FileCheck %s

// Two assemblies of slices that start from one (CSE'd) tensor.empty, the
// first still read after the second is built (a skip connection around two
// chunked feed-forwards): each gets a buffer of its own. Writing both into
// one buffer gave a relative error of ~1.
// CHECK-LABEL: host plan of @two_assemblies
// CHECK: command 0: dispatch chunk [1, 1, 1] reads b0[0, 32) writes b[[FIRST:[0-9]+]][0, 16)
// CHECK: command 1: dispatch chunk [1, 1, 1] reads b0[0, 32) writes b[[FIRST]][16, 32)
// CHECK: command 2: dispatch chunk [1, 1, 1] reads b[[FIRST]][0, 32) writes b[[SECOND:[0-9]+]][0, 16)
// CHECK: command 3: dispatch chunk [1, 1, 1] reads b[[FIRST]][0, 32) writes b[[SECOND]][16, 32)
// CHECK: command 4: dispatch add [1, 1, 1] reads b[[FIRST]][0, 32), b[[SECOND]][0, 32) writes b1[0, 32)
func.func @two_assemblies(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %h = tensor.empty() : tensor<4xf32>
  %a0 = call @chunk(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = tensor.insert_slice %a0 into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %a1 = call @chunk(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %first = tensor.insert_slice %a1 into %a[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %b0 = call @chunk(%first, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = tensor.insert_slice %b0 into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %b1 = call @chunk(%first, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %second = tensor.insert_slice %b1 into %b[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %sum = call @add(%first, %second, %e) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %sum : tensor<8xf32>
}
func.func private @chunk(%x: tensor<8xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}
func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}

// -----

// A partial assembly with two continuations: the second starts from a copy
// of the shared part instead of writing into the first one's bytes.
// CHECK-LABEL: host plan of @branching_assembly
// CHECK: command 0: dispatch chunk [1, 1, 1] reads b0[0, 32) writes b[[A:[0-9]+]][0, 16)
// CHECK: command 1: dispatch chunk [1, 1, 1] reads b0[0, 32) writes b[[T1:[0-9]+]][0, 16)
// CHECK: command 2: copy insert_slice.init b[[A]][0, 32) to b1[0, 32)
// CHECK: command 3: copy insert_slice b[[T1]][0, 16) to b1[16, 32)
// CHECK: command 4: dispatch chunk [1, 1, 1] reads b0[0, 32) writes b[[T2:[0-9]+]][0, 16)
// CHECK: command 5: copy insert_slice.init b[[A]][0, 32) to b2[0, 32)
// CHECK: command 6: copy insert_slice b[[T2]][0, 16) to b2[16, 32)
func.func @branching_assembly(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %h = tensor.empty() : tensor<4xf32>
  %a0 = call @chunk(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = tensor.insert_slice %a0 into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %b1 = call @chunk(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = tensor.insert_slice %b1 into %a[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %c1 = call @chunk(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = tensor.insert_slice %c1 into %a[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %b, %c : tensor<8xf32>, tensor<8xf32>
}
func.func private @chunk(%x: tensor<8xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}

// -----

// A partial assembly that a dispatch also reads is not extended in place:
// the next insert starts from a copy, so the reader sees the bytes it was
// given.
// CHECK-LABEL: host plan of @reads_its_destination
// CHECK: command 0: dispatch chunk4 [1, 1, 1] reads b0[0, 32) writes b[[A:[0-9]+]][0, 16)
// CHECK: command 1: dispatch chunk8 [1, 1, 1] reads b[[A]][0, 32) writes b[[T:[0-9]+]][0, 16)
// CHECK: command 2: copy insert_slice.init b[[A]][0, 32) to b1[0, 32)
// CHECK: command 3: copy insert_slice b[[T]][0, 16) to b1[16, 32)
func.func @reads_its_destination(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %h = tensor.empty() : tensor<4xf32>
  %a0 = call @chunk4(%x, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = tensor.insert_slice %a0 into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %b0 = call @chunk8(%a, %h) : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = tensor.insert_slice %b0 into %a[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func private @chunk4(%x: tensor<8xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}
func.func private @chunk8(%x: tensor<8xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}

// -----

// A dispatch that starts its output from another dispatch's result (a
// product accumulating into a zero fill) updates it in place when nothing
// else reads it: no copy, no second buffer. A fill read twice is copied
// for each reader that starts from it, as is one that its own updater
// also reads as an input.
// CHECK-LABEL: host plan of @updates_its_init
// CHECK: command 0: dispatch zeros [1, 1, 1] writes b[[Z:[0-9]+]][0, 32)
// CHECK-NEXT: command 1: dispatch accumulate [1, 1, 1] reads b0[0, 32) writes b[[Z]][0, 32)
// CHECK-NEXT: command 2: dispatch zeros [1, 1, 1] writes b[[S:[0-9]+]][0, 32)
// CHECK-NEXT: command 3: copy accumulate.init0 b[[S]][0, 32) to b[[A:[0-9]+]][0, 32)
// CHECK-NEXT: command 4: dispatch accumulate [1, 1, 1] reads b[[Z]][0, 32) writes b[[A]][0, 32)
// CHECK-NEXT: command 5: copy accumulate.init0 b[[S]][0, 32) to b[[B:[0-9]+]][0, 32)
// CHECK-NEXT: command 6: dispatch accumulate [1, 1, 1] reads b[[A]][0, 32) writes b[[B]][0, 32)
// CHECK-NEXT: command 7: dispatch zeros [1, 1, 1] writes b[[R:[0-9]+]][0, 32)
// CHECK-NEXT: command 8: copy accumulate.init0 b[[R]][0, 32) to b1[0, 32)
// CHECK-NEXT: command 9: dispatch accumulate [1, 1, 1] reads b[[R]][0, 32) writes b1[0, 32)
func.func @updates_its_init(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %z = call @zeros(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %a = call @accumulate(%x, %z) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s = call @zeros(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %b = call @accumulate(%a, %s) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = call @accumulate(%b, %s) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = call @zeros(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %d = call @accumulate(%r, %r) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %sum = call @add(%c, %d, %e) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %d : tensor<8xf32>
}
func.func private @zeros(%out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}
func.func private @accumulate(%x: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}
func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}

// -----

// A dispatch that computes a parameter's new value from its old one, which
// nothing else reads, assigned back to it (a decode step's cache row):
// updated where the parameter lives, neither copied in nor copied back.
// CHECK-LABEL: host plan of @cache_row
// CHECK: buffer 1: parameter 0 'decode.cache.0.key', 64 bytes
// CHECK: command 0: dispatch write_row [1, 1, 1] reads b0[0, 16) writes b1[0, 64)
// CHECK-NEXT: command 1: dispatch read_cache [1, 1, 1] reads b1[0, 64) writes b2[0, 16)
// CHECK-NOT: command 2
func.func @cache_row(%row: tensor<4xf32>, %cache: tensor<16xf32> {attn.param = "decode.cache.0.key", attn.param_state})
    -> (tensor<4xf32>, tensor<16xf32> {attn.assigns = "decode.cache.0.key"}) {
  %new = call @write_row(%row, %cache) : (tensor<4xf32>, tensor<16xf32>) -> tensor<16xf32>
  %e = tensor.empty() : tensor<4xf32>
  %out = call @read_cache(%new, %e) : (tensor<16xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %out, %new : tensor<4xf32>, tensor<16xf32>
}
func.func private @write_row(%row: tensor<4xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<16xf32>
}
func.func private @read_cache(%cache: tensor<16xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}

// -----

// The old value read again after the update: the update goes to a copy,
// and the new value is copied into the parameter when the function returns.
// CHECK-LABEL: host plan of @cache_row_read_twice
// CHECK: command 0: copy write_row.init0 b1[0, 64) to b[[COPY:[0-9]+]][0, 64)
// CHECK: command 1: dispatch write_row [1, 1, 1] reads b0[0, 16) writes b[[COPY]][0, 64)
// CHECK: command 2: dispatch read_cache [1, 1, 1] reads b1[0, 64) writes b2[0, 16)
// CHECK: command 3: copy result1 b[[COPY]][0, 64) to b1[0, 64)
func.func @cache_row_read_twice(%row: tensor<4xf32>, %cache: tensor<16xf32> {attn.param = "decode.cache.0.key", attn.param_state})
    -> (tensor<4xf32>, tensor<16xf32> {attn.assigns = "decode.cache.0.key"}) {
  %new = call @write_row(%row, %cache) : (tensor<4xf32>, tensor<16xf32>) -> tensor<16xf32>
  %e = tensor.empty() : tensor<4xf32>
  %out = call @read_cache(%cache, %e) : (tensor<16xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %out, %new : tensor<4xf32>, tensor<16xf32>
}
func.func private @write_row(%row: tensor<4xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<16xf32>
}
func.func private @read_cache(%cache: tensor<16xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<4xf32>
}

// -----

// An all-reduce runs on the host between the dispatches: in place on a
// dispatch result nothing else reads; a value read again afterwards (or an
// input, which a module never writes) is reduced in a copy.
// CHECK-LABEL: host plan of @all_reduce
// CHECK: command 0: dispatch zeros [1, 1, 1] writes b[[G:[0-9]+]][0, 32)
// CHECK-NEXT: command 1: dispatch zeros [1, 1, 1] writes b[[H:[0-9]+]][0, 32)
// CHECK-NEXT: command 2: copy all_reduce.in1 b[[H]][0, 32) to b[[HC:[0-9]+]][0, 32)
// CHECK-NEXT: command 3: copy all_reduce.in2 b0[0, 32) to b[[XC:[0-9]+]][0, 32)
// CHECK-NEXT: command 4: all_reduce mean all_reduce in place b[[G]][0, 32), b[[HC]][0, 32), b[[XC]][0, 32)
// CHECK-NEXT: command 5: dispatch add [1, 1, 1] reads b[[G]][0, 32), b[[H]][0, 32) writes b1[0, 32)
func.func @all_reduce(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %g = call @zeros(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %h = call @zeros(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %r:3 = attn.all_reduce mean %g, %h, %x : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %sum = call @add(%r#0, %h, %e) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %sum, %r#1, %r#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
func.func private @zeros(%out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}
func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  return %out : tensor<8xf32>
}

// -----

// An exchange sends from device memory the session owns, so an argument is
// copied first, and receives into a buffer of its own.
// CHECK-LABEL: host plan of @exchanges
// CHECK: command 0: copy all_to_all.in b0[0, 32) to b[[X:[0-9]+]][0, 32)
// CHECK-NEXT: command 1: all_to_all all_to_all of 2 blocks from b[[X]][0, 32) to b[[A:[0-9]+]][0, 32)
// CHECK-NEXT: command 2: ring_shift ring_shift by -1 from b[[A]][0, 32) to b[[S:[0-9]+]][0, 32)
// CHECK-NEXT: command 3: rank_slice rank_slice of 2 blocks from b[[S]][0, 32) to b[[M:[0-9]+]][0, 16)
// CHECK-NEXT: command 4: rank_pad rank_pad to 2 blocks from b[[M]][0, 16) to b[[P:[0-9]+]][0, 32)
// CHECK-NEXT: command 5: copy result0 b[[P]][0, 32) to b1[0, 32)
func.func @exchanges(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = attn.all_to_all %x : tensor<2x4xf32>
  %s = attn.ring_shift %a by -1 : tensor<2x4xf32>
  %m = attn.rank_slice %s : tensor<2x4xf32> -> tensor<1x4xf32>
  %p = attn.rank_pad %m : tensor<1x4xf32> -> tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}
