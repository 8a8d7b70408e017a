// The flash backward of adaptive-span attention against central finite
// differences of the double-precision reference. Every operand of four
// attentions is a parameter, z included: no memory, a memory as long as
// the segment and twice as long (causal, z drawn in [0.1, 0.9) and z =
// 0.99), and a non-causal one at z = 0.01 (its queries see the ramp and
// every later key). At z = 0 and 1 the spans are whole numbers, a kink of
// the ramp at a key: finite differences there average its two sides. The finite differences check the build with 16 x 20 tiles, whose
// queries and keys are padded, whose spans end mid-tile and which skips
// tiles beyond every query's reach; the build with the default tiles must
// agree with it. No z lands within the step of a kink of the ramp.
// RUN: lcc %s --train --emit-gradients --query-tile=16 --key-tile=20 -o %t.small.lcm
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-testdata --output=%t.none.q.npy --shape=1,2,24,8 --seed=301
// RUN: lcc-testdata --output=%t.none.k.npy --shape=1,2,24,8 --seed=302
// RUN: lcc-testdata --output=%t.none.v.npy --shape=1,2,24,8 --seed=303
// RUN: lcc-testdata --output=%t.none.z.npy --shape=2 --uniform=0.1,0.9 --seed=31
// RUN: lcc-testdata --output=%t.memory.q.npy --shape=1,2,24,8 --seed=304
// RUN: lcc-testdata --output=%t.memory.k.npy --shape=1,2,48,8 --seed=305
// RUN: lcc-testdata --output=%t.memory.v.npy --shape=1,2,48,8 --seed=306
// RUN: lcc-testdata --output=%t.memory.z.npy --shape=2 --uniform=0.1,0.9 --seed=32
// RUN: lcc-testdata --output=%t.two_memories.q.npy --shape=1,2,16,8 --seed=307
// RUN: lcc-testdata --output=%t.two_memories.k.npy --shape=1,2,48,8 --seed=308
// RUN: lcc-testdata --output=%t.two_memories.v.npy --shape=1,2,48,4 --seed=309
// RUN: lcc-testdata --output=%t.two_memories.z.npy --shape=2 --fill=0.99
// RUN: lcc-testdata --output=%t.noncausal.q.npy --shape=1,2,16,8 --seed=310
// RUN: lcc-testdata --output=%t.noncausal.k.npy --shape=1,2,40,8 --seed=311
// RUN: lcc-testdata --output=%t.noncausal.v.npy --shape=1,2,40,8 --seed=312
// RUN: lcc-testdata --output=%t.noncausal.z.npy --shape=2 --fill=0.01
// RUN: lcc-testdata --pack=none.q=%t.none.q.npy --pack=none.k=%t.none.k.npy --pack=none.v=%t.none.v.npy --pack=none.z=%t.none.z.npy --pack=memory.q=%t.memory.q.npy --pack=memory.k=%t.memory.k.npy --pack=memory.v=%t.memory.v.npy --pack=memory.z=%t.memory.z.npy --pack=two_memories.q=%t.two_memories.q.npy --pack=two_memories.k=%t.two_memories.k.npy --pack=two_memories.v=%t.two_memories.v.npy --pack=two_memories.z=%t.two_memories.z.npy --pack=noncausal.q=%t.noncausal.q.npy --pack=noncausal.k=%t.noncausal.k.npy --pack=noncausal.v=%t.noncausal.v.npy --pack=noncausal.z=%t.noncausal.z.npy --output=%t.w.safetensors
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,2,24 --dtype=i32 --uniform=0,8
// RUN: lcc-testdata --output=%t.labels16.npy --shape=1,2,16 --dtype=i32 --uniform=0,4
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.small.lcm --function=loss_gradients --input=%t.labels.npy --input=%t.labels16.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.small.safetensors
// RUN: lcc-reference --graph=%S/Inputs/adaptive-span.json --params=%t.w.safetensors --input=%t.labels.npy --input=%t.labels16.npy --check-gradients=%t.small.safetensors --fd-entries=200 --rtol=1e-5 | FileCheck %s
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.labels.npy --input=%t.labels16.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-compare %t.g.safetensors %t.small.safetensors --rtol=1e-5
// CHECK: loss: compiled
// CHECK-DAG: none.q: 200 of 384 entries
// CHECK-DAG: none.z: 2 of 2 entries
// CHECK-DAG: memory.k: 200 of 768 entries
// CHECK-DAG: memory.z: 2 of 2 entries
// CHECK-DAG: two_memories.v: 200 of 384 entries
// CHECK-DAG: two_memories.z: 2 of 2 entries
// CHECK-DAG: noncausal.q: 200 of 256 entries
// CHECK-DAG: noncausal.z: 2 of 2 entries
// CHECK: max relative error
func.func @loss(%labels: tensor<1x2x24xi32>, %labels16: tensor<1x2x16xi32>) -> tensor<f32> {
  %none_q = attn.param "none.q" : tensor<1x2x24x8xf32>
  %none_k = attn.param "none.k" : tensor<1x2x24x8xf32>
  %none_v = attn.param "none.v" : tensor<1x2x24x8xf32>
  %none_z = attn.param "none.z" : tensor<2xf32>
  %none_o = attn.adaptive_span_attention %none_q, %none_k, %none_v, %none_z {max_span = 16 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<2xf32>) -> tensor<1x2x24x8xf32>
  %none_loss = attn.softmax_cross_entropy %none_o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  %memory_q = attn.param "memory.q" : tensor<1x2x24x8xf32>
  %memory_k = attn.param "memory.k" : tensor<1x2x48x8xf32>
  %memory_v = attn.param "memory.v" : tensor<1x2x48x8xf32>
  %memory_z = attn.param "memory.z" : tensor<2xf32>
  %memory_o = attn.adaptive_span_attention %memory_q, %memory_k, %memory_v, %memory_z {max_span = 32 : i64, ramp = 8 : i64, causal = true}
      : (tensor<1x2x24x8xf32>, tensor<1x2x48x8xf32>, tensor<1x2x48x8xf32>, tensor<2xf32>) -> tensor<1x2x24x8xf32>
  %memory_loss = attn.softmax_cross_entropy %memory_o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  %two_memories_q = attn.param "two_memories.q" : tensor<1x2x16x8xf32>
  %two_memories_k = attn.param "two_memories.k" : tensor<1x2x48x8xf32>
  %two_memories_v = attn.param "two_memories.v" : tensor<1x2x48x4xf32>
  %two_memories_z = attn.param "two_memories.z" : tensor<2xf32>
  %two_memories_o = attn.adaptive_span_attention %two_memories_q, %two_memories_k, %two_memories_v, %two_memories_z {max_span = 40 : i64, ramp = 6 : i64, causal = true, scale = 0.4 : f32}
      : (tensor<1x2x16x8xf32>, tensor<1x2x48x8xf32>, tensor<1x2x48x4xf32>, tensor<2xf32>) -> tensor<1x2x16x4xf32>
  %two_memories_loss = attn.softmax_cross_entropy %two_memories_o, %labels16 : (tensor<1x2x16x4xf32>, tensor<1x2x16xi32>) -> tensor<f32>
  %noncausal_q = attn.param "noncausal.q" : tensor<1x2x16x8xf32>
  %noncausal_k = attn.param "noncausal.k" : tensor<1x2x40x8xf32>
  %noncausal_v = attn.param "noncausal.v" : tensor<1x2x40x8xf32>
  %noncausal_z = attn.param "noncausal.z" : tensor<2xf32>
  %noncausal_o = attn.adaptive_span_attention %noncausal_q, %noncausal_k, %noncausal_v, %noncausal_z {max_span = 20 : i64, ramp = 6 : i64}
      : (tensor<1x2x16x8xf32>, tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32>, tensor<2xf32>) -> tensor<1x2x16x8xf32>
  %noncausal_loss = attn.softmax_cross_entropy %noncausal_o, %labels16 : (tensor<1x2x16x8xf32>, tensor<1x2x16xi32>) -> tensor<f32>
  %sum0 = arith.addf %none_loss, %memory_loss : tensor<f32>
  %sum1 = arith.addf %sum0, %two_memories_loss : tensor<f32>
  %sum2 = arith.addf %sum1, %noncausal_loss : tensor<f32>
  return %sum2 : tensor<f32>
}
