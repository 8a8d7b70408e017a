// attention-half-gradients.mlir's model with its mixed precision written in
// it: each attention core between arith.truncf to bf16 and arith.extf back.
func.func @loss(%x: tensor<1x96x64xf32>, %labels: tensor<1x96xi32>) -> tensor<f32> {
  %wq = attn.param "dense.wq" : tensor<64x64xf32>
  %wk = attn.param "dense.wk" : tensor<64x64xf32>
  %wv = attn.param "dense.wv" : tensor<64x64xf32>
  %wo = attn.param "dense.wo" : tensor<64x64xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x96x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x96x64xf32> {
  ^bb0(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>, %v: tensor<1x2x96x32xf32>):
    %qh = arith.truncf %q : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %kh = arith.truncf %k : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %vh = arith.truncf %v : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %oh = attn.attention %qh, %kh, %vh : (tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>) -> tensor<1x2x96x32xbf16>
    %o = arith.extf %oh : tensor<1x2x96x32xbf16> to tensor<1x2x96x32xf32>
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
    %qh = arith.truncf %q : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %kh = arith.truncf %k : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %vh = arith.truncf %v : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %oh = attn.attention %qh, %kh, %vh {causal = true} : (tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>) -> tensor<1x2x96x32xbf16>
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
    %o = arith.extf %oh : tensor<1x2x96x32xbf16> to tensor<1x2x96x32xf32>
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
    %qh = arith.truncf %q : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %kh = arith.truncf %k : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %vh = arith.truncf %v : tensor<1x2x96x32xf32> to tensor<1x2x96x32xbf16>
    %oh = attn.sparse_attention fixed %qh, %kh, %vh {block = 32 : i64, stride = 32 : i64, summary = 8 : i64, causal = true} : (tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>) -> tensor<1x2x96x32xbf16>
    %o = arith.extf %oh : tensor<1x2x96x32xbf16> to tensor<1x2x96x32xf32>
    attn.yield %o : tensor<1x2x96x32xf32>
  }
  %x3 = arith.addf %x2, %h3 : tensor<1x96x64xf32>
  %w = attn.param "head.w" : tensor<64x6xf32>
  %logits = attn.linear %x3, %w : (tensor<1x96x64xf32>, tensor<64x6xf32>) -> tensor<1x96x6xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels : (tensor<1x96x6xf32>, tensor<1x96xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
