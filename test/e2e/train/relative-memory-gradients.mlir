// A Transformer-XL layer differentiated through its memory: the keys and
// values are projected from [memory; segment] (tensor.concat), the
// distances' encodings from attn.sinusoidal_encoding, the heads made and
// merged by reshapes, against central finite differences of the
// double-precision reference on the same graph. The memory is an argument:
// its gradient stops there, and every weight's gradient includes what
// reaches it through the memory's keys and values.
// RUN: lcc %s --train --emit-gradients --query-tile=16 --key-tile=20 -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=23
// RUN: lcc-testdata --output=%t.x.npy --shape=1,24,8
// RUN: lcc-testdata --output=%t.mem.npy --shape=1,40,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,24 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.mem.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/relative-memory.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.mem.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: xl.wk: 64 of 64 entries
// CHECK-DAG: xl.wv: 64 of 64 entries
// CHECK-DAG: xl.wr: 64 of 64 entries
// CHECK-DAG: xl.r_w_bias: 8 of 8 entries
// CHECK-DAG: xl.r_r_bias: 8 of 8 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x24x8xf32>, %mem: tensor<1x40x8xf32>,
                %labels: tensor<1x24xi32>) -> tensor<f32> {
  %wq = attn.param "xl.wq" : tensor<8x8xf32>
  %wk = attn.param "xl.wk" : tensor<8x8xf32>
  %wv = attn.param "xl.wv" : tensor<8x8xf32>
  %wr = attn.param "xl.wr" : tensor<8x8xf32>
  %wo = attn.param "xl.wo" : tensor<8x8xf32>
  %u = attn.param "xl.r_w_bias" : tensor<1x8xf32>
  %w = attn.param "xl.r_r_bias" : tensor<1x8xf32>
  %cat = tensor.concat dim(1) %mem, %x : (tensor<1x40x8xf32>, tensor<1x24x8xf32>) -> tensor<1x64x8xf32>
  %q = attn.linear %x, %wq : (tensor<1x24x8xf32>, tensor<8x8xf32>) -> tensor<1x24x8xf32>
  %k = attn.linear %cat, %wk : (tensor<1x64x8xf32>, tensor<8x8xf32>) -> tensor<1x64x8xf32>
  %v = attn.linear %cat, %wv : (tensor<1x64x8xf32>, tensor<8x8xf32>) -> tensor<1x64x8xf32>
  %enc = attn.sinusoidal_encoding : tensor<64x8xf32>
  %r = attn.linear %enc, %wr : (tensor<64x8xf32>, tensor<8x8xf32>) -> tensor<64x8xf32>
  %pos = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 64, 8] : tensor<64x8xf32> into tensor<1x64x8xf32>
  %qh = tensor.expand_shape %q [[0, 1], [2], [3]] output_shape [1, 1, 24, 8] : tensor<1x24x8xf32> into tensor<1x1x24x8xf32>
  %kh = tensor.expand_shape %k [[0, 1], [2], [3]] output_shape [1, 1, 64, 8] : tensor<1x64x8xf32> into tensor<1x1x64x8xf32>
  %vh = tensor.expand_shape %v [[0, 1], [2], [3]] output_shape [1, 1, 64, 8] : tensor<1x64x8xf32> into tensor<1x1x64x8xf32>
  %o = attn.relative_attention %qh, %kh, %vh, %pos, %u, %w {clamp_len = 50 : i64}
      : (tensor<1x1x24x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>,
         tensor<1x64x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1x24x8xf32>
  %m = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<1x1x24x8xf32> into tensor<1x24x8xf32>
  %a = attn.linear %m, %wo : (tensor<1x24x8xf32>, tensor<8x8xf32>) -> tensor<1x24x8xf32>
  %s = arith.addf %x, %a : tensor<1x24x8xf32>
  %head = attn.param "xl.head" : tensor<8x6xf32>
  %logits = attn.linear %s, %head : (tensor<1x24x8xf32>, tensor<8x6xf32>) -> tensor<1x24x6xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels : (tensor<1x24x6xf32>, tensor<1x24xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
