// RUN: lcc-opt %s --split-input-file --attn-context-parallel=ranks=2 --verify-diagnostics

func.func @heads(%x: tensor<1x8x6xf32>) -> tensor<1x8x6xf32> {
  %q = attn.split_heads %x {heads = 3 : i64} : (tensor<1x8x6xf32>) -> tensor<1x3x8x2xf32>
  // expected-error@+1 {{context parallelism over 2 ranks gives each rank heads / 2 of this attention's 3 heads: give a multiple of 2}}
  %o = attn.attention %q, %q, %q {shared_qk} : (tensor<1x3x8x2xf32>, tensor<1x3x8x2xf32>, tensor<1x3x8x2xf32>) -> tensor<1x3x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x3x8x2xf32>) -> tensor<1x8x6xf32>
  return %y : tensor<1x8x6xf32>
}

// -----

// Each rank's share is two chunks (zigzag): 6 positions are not 4 equal
// chunks.
// expected-error@+1 {{context parallelism gives each of 2 ranks two of 4 equal chunks of the 6 positions: give a multiple of 4}}
func.func @positions(%x: tensor<1x6x4xf32>) -> tensor<1x6x4xf32> {
  %q = attn.split_heads %x {heads = 2 : i64} : (tensor<1x6x4xf32>) -> tensor<1x2x6x2xf32>
  %o = attn.attention %q, %q, %q : (tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) -> tensor<1x2x6x2xf32>
  %y = attn.merge_heads %o : (tensor<1x2x6x2xf32>) -> tensor<1x6x4xf32>
  return %y : tensor<1x6x4xf32>
}

// -----

func.func @half(%q: tensor<1x2x4x2xbf16>) -> tensor<1x2x4x2xbf16> {
  // expected-error@+1 {{attends on 'bf16' operands: context parallelism exchanges f32 between ranks only; give the model f32 tensors}}
  %o = attn.attention %q, %q, %q : (tensor<1x2x4x2xbf16>, tensor<1x2x4x2xbf16>, tensor<1x2x4x2xbf16>) -> tensor<1x2x4x2xbf16>
  return %o : tensor<1x2x4x2xbf16>
}

// -----

func.func @memory(%q: tensor<1x2x4x2xf32>, %kv: tensor<1x2x8x2xf32>) -> tensor<1x2x4x2xf32> {
  // expected-error@+1 {{attends to 8 positions from 4 queries (memories of earlier segments): context parallelism splits one sequence, and attention within it}}
  %o = attn.attention %q, %kv, %kv : (tensor<1x2x4x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x4x2xf32>
  return %o : tensor<1x2x4x2xf32>
}

// -----

func.func @head_number(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %q = attn.split_heads %x {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  // Shared QK goes over the heads (around the ring, every rank holds every
  // head: test/tools/context-parallel.test).
  // expected-error@+1 {{its mask or score reads the head number, which context parallelism over the heads (each rank a share of them) does not support yet}}
  %o = attn.attention %q, %q, %q {shared_qk} : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %h64 = arith.index_cast %h : index to i64
        %hf = arith.sitofp %h64 : i64 to f32
        %t = arith.addf %s, %hf : f32
        attn.yield %t : f32
      }
  %y = attn.merge_heads %o : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

func.func @weighted(%x: tensor<1x8x4xf32>, %labels: tensor<1x8xi32>, %w: tensor<1x8xf32>) -> tensor<f32> {
  %q = attn.split_heads %x {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  %o = attn.attention %q, %q, %q : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  // expected-error@+1 {{context parallelism averages a loss over the ranks' equal shares of the positions, which a weighted loss does not allow yet}}
  %l = attn.softmax_cross_entropy %y, %labels, %w : (tensor<1x8x4xf32>, tensor<1x8xi32>, tensor<1x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @mixes(%x: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %q = attn.split_heads %x {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  %o = attn.attention %q, %q, %q : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  // expected-error@+1 {{--context-parallel: 'tensor.extract_slice' may mix positions}}
  %s = tensor.extract_slice %y[0, 0, 0] [1, 4, 4] [1, 2, 1] : tensor<1x8x4xf32> to tensor<1x4x4xf32>
  return %s : tensor<1x4x4xf32>
}

// -----

// expected-error@+1 {{argument #1 ('tensor<8x4xf32>') has 8 rows but not in dimension 1 (or 2 of 4): context parallelism splits arguments [batch, seq, ...] and [batch, heads, seq, dim] on their positions}}
func.func @sequence_first(%x: tensor<1x8x4xf32>, %y: tensor<8x4xf32>) -> tensor<1x8x4xf32> {
  %q = attn.split_heads %x {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  %o = attn.attention %q, %q, %q : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
  %r = attn.merge_heads %o : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  return %r : tensor<1x8x4xf32>
}
