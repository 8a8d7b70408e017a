// Mixed precision: --attention-precision=bf16 and f16 compute each
// attention core, forward and backward, in the half type (FlashAttention-2's
// way: operands rounded, products on half pairs with f32 sums, softmax and
// logsumexp in f32, p and ds rounded for their products) while the
// projections, the loss and the gradients around them stay f32. Three
// blocks on 96 positions (a padded second tile of 64), 2 heads of 32 (whole
// mma tiles on the GPU): dense, a causal sliding window with ALiBi (mask
// and score regions on f32 scores; hidden tiles skipped), and Sparse
// Transformer fixed attention. Every weight's gradient against central
// finite differences of the double-precision reference on the f32 model:
// the error is the half type's rounding (bf16 keeps 8 bits, about 4e-3
// relative, here up to 1.2e-2 in the query and key weights through ds;
// f16 keeps 11, up to 1.2e-3), where f32 meets 1e-5
// (mask-score-sparse-gradients.mlir). Inputs and labels are drawn with fixed
// seeds, so the half types' error is held to the bounds on one known draw.
// RUN: lcc %s --train --emit-gradients --attention-precision=bf16 -o %t.bf16.lcm
// RUN: lcc %s --train --emit-gradients --attention-precision=f16 -o %t.f16.lcm
// RUN: lcc-run %t.bf16.lcm --init-params=%t.w.safetensors --seed=14
// RUN: lcc-testdata --output=%t.x.npy --shape=1,96,64 --seed=41
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,96 --dtype=i32 --uniform=0,6 --seed=42
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.bf16.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.bf16.safetensors
// RUN: lcc-reference --graph=%S/Inputs/attention-half.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.bf16.safetensors --fd-entries=32 --rtol=3e-2 | FileCheck %s
// RUN: lcc-run %t.f16.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.f16.safetensors
// RUN: lcc-reference --graph=%S/Inputs/attention-half.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.f16.safetensors --fd-entries=32 --rtol=5e-3 | FileCheck %s --check-prefix=F16
// The same mixed precision written in the model (Inputs/attention-half-ir.mlir:
// arith.truncf before each attention, arith.extf after): the train step
// differentiates through the casts, and the gradients are the same bits.
// RUN: lcc %S/Inputs/attention-half-ir.mlir --train --emit-gradients -o %t.ir.lcm
// RUN: lcc-run %t.ir.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.ir.safetensors
// RUN: cmp %t.ir.safetensors %t.bf16.safetensors
// CHECK: loss: compiled
// CHECK-DAG: dense.wq: 32 of 4096 entries
// CHECK-DAG: window.wk: 32 of 4096 entries
// CHECK-DAG: sparse.wv: 32 of 4096 entries
// CHECK-DAG: head.w: 32 of 384 entries
// CHECK: max relative error
// F16: max relative error
func.func @loss(%x: tensor<1x96x64xf32>, %labels: tensor<1x96xi32>) -> tensor<f32> {
  %wq = attn.param "dense.wq" : tensor<64x64xf32>
  %wk = attn.param "dense.wk" : tensor<64x64xf32>
  %wv = attn.param "dense.wv" : tensor<64x64xf32>
  %wo = attn.param "dense.wo" : tensor<64x64xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x96x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x96x64xf32> {
  ^bb0(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>, %v: tensor<1x2x96x32xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>) -> tensor<1x2x96x32xf32>
    attn.yield %o : tensor<1x2x96x32xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x96x64xf32>
  %mq = attn.param "window.wq" : tensor<64x64xf32>
  %mk = attn.param "window.wk" : tensor<64x64xf32>
  %mv = attn.param "window.wv" : tensor<64x64xf32>
  %mo = attn.param "window.wo" : tensor<64x64xf32>
  %h2 = attn.multi_head_attention %x1, query %mq, key %mk, value %mv, output %mo {heads = 2 : i64}
      : (tensor<1x96x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x96x64xf32> {
  ^bb0(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>, %v: tensor<1x2x96x32xf32>):
    %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>) -> tensor<1x2x96x32xf32>
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
    attn.yield %o : tensor<1x2x96x32xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x96x64xf32>
  %sq = attn.param "sparse.wq" : tensor<64x64xf32>
  %sk = attn.param "sparse.wk" : tensor<64x64xf32>
  %sv = attn.param "sparse.wv" : tensor<64x64xf32>
  %so = attn.param "sparse.wo" : tensor<64x64xf32>
  %h3 = attn.multi_head_attention %x2, query %sq, key %sk, value %sv, output %so {heads = 2 : i64}
      : (tensor<1x96x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x96x64xf32> {
  ^bb0(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>, %v: tensor<1x2x96x32xf32>):
    %o = attn.sparse_attention fixed %q, %k, %v {block = 32 : i64, stride = 32 : i64, summary = 8 : i64, causal = true} : (tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>) -> tensor<1x2x96x32xf32>
    attn.yield %o : tensor<1x2x96x32xf32>
  }
  %x3 = arith.addf %x2, %h3 : tensor<1x96x64xf32>
  %w = attn.param "head.w" : tensor<64x6xf32>
  %logits = attn.linear %x3, %w : (tensor<1x96x64xf32>, tensor<64x6xf32>) -> tensor<1x96x6xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels : (tensor<1x96x6xf32>, tensor<1x96xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
