// The flash backward through mask and score regions and sparse attention,
// against central finite differences of the double-precision reference, on
// 160 positions (three query tiles of 64, the last padded): a causal
// sliding window of 32 with ALiBi (the window hides whole key tiles, which
// the backward skips as the forward does), a soft cap (the score region's
// tanh is differentiated), and Sparse Transformer fixed attention
// (differentiated as the masked attention it equals). Every gradient is
// checked on every entry.
// RUN: lcc %s --train --emit-gradients -o %t.lcm 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: mask visits
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=13
// RUN: lcc-testdata --output=%t.x.npy --shape=1,160,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,160 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/mask-score-sparse.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: window.wq: 64 of 64 entries
// CHECK-DAG: softcap.wk: 64 of 64 entries
// CHECK-DAG: sparse.wv: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x160x8xf32>, %labels: tensor<1x160xi32>) -> tensor<f32> {
  %wq = attn.param "window.wq" : tensor<8x8xf32>
  %wk = attn.param "window.wk" : tensor<8x8xf32>
  %wv = attn.param "window.wv" : tensor<8x8xf32>
  %wo = attn.param "window.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
  ^bb0(%q: tensor<1x2x160x4xf32>, %k: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
    %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
      mask {
      ^bb0(%b: index, %hd: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %e = arith.subi %j, %i : index
        %distance = arith.maxsi %d, %e : index
        %w = arith.constant 32 : index
        %near = arith.cmpi slt, %distance, %w : index
        attn.yield %near : i1
      } score {
      ^bb0(%s: f32, %b: index, %hd: index, %i: index, %j: index):
        %one = arith.constant 1 : index
        %h1 = arith.addi %hd, %one : index
        %h64 = arith.index_cast %h1 : index to i64
        %hf = arith.sitofp %h64 : i64 to f32
        // ln(2^(-8/H)) = -8 ln 2 / 2
        %rate = arith.constant -2.77258872 : f32
        %exponent = arith.mulf %hf, %rate : f32
        %slope = math.exp %exponent : f32
        %dd = arith.subi %j, %i : index
        %d64 = arith.index_cast %dd : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %t = arith.addf %s, %bias : f32
        attn.yield %t : f32
      }
    attn.yield %o : tensor<1x2x160x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x160x8xf32>
  %cq = attn.param "softcap.wq" : tensor<8x8xf32>
  %ck = attn.param "softcap.wk" : tensor<8x8xf32>
  %cv = attn.param "softcap.wv" : tensor<8x8xf32>
  %co = attn.param "softcap.wo" : tensor<8x8xf32>
  %h2 = attn.multi_head_attention %x1, query %cq, key %ck, value %cv, output %co {heads = 2 : i64}
      : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
  ^bb0(%q: tensor<1x2x160x4xf32>, %k: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
      score {
      ^bb0(%s: f32, %b: index, %hd: index, %i: index, %j: index):
        %cap = arith.constant 2.0 : f32
        %scaled = arith.divf %s, %cap : f32
        %t = math.tanh %scaled : f32
        %capped = arith.mulf %cap, %t : f32
        attn.yield %capped : f32
      }
    attn.yield %o : tensor<1x2x160x4xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x160x8xf32>
  %sq = attn.param "sparse.wq" : tensor<8x8xf32>
  %sk = attn.param "sparse.wk" : tensor<8x8xf32>
  %sv = attn.param "sparse.wv" : tensor<8x8xf32>
  %so = attn.param "sparse.wo" : tensor<8x8xf32>
  %h3 = attn.multi_head_attention %x2, query %sq, key %sk, value %sv, output %so {heads = 2 : i64}
      : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
  ^bb0(%q: tensor<1x2x160x4xf32>, %k: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
    %o = attn.sparse_attention fixed %q, %k, %v {block = 32 : i64, stride = 32 : i64, summary = 8 : i64, causal = true}
        : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
    attn.yield %o : tensor<1x2x160x4xf32>
  }
  %x3 = arith.addf %x2, %h3 : tensor<1x160x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x3, %hw : (tensor<1x160x8xf32>, tensor<8x6xf32>) -> tensor<1x160x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x160x6xf32>, tensor<1x160xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
