// RUN: lcc-opt %s --split-input-file --attn-lower-to-linalg --verify-diagnostics | FileCheck %s

// A sliding window of 64 keys on each side at seq 256 in tiles of 64: the
// block table is a constant computed at compile time (0: hidden, 1: partly
// visible, 2: wholly visible); hidden key tiles are skipped by an scf.if
// around the tile's work, wholly visible ones take a second scf.if to the
// scores without the mask, the others have the mask inlined into their
// scores, and a query that sees no key gets zeros.
// CHECK-LABEL: func @sliding_window
// CHECK-DAG: %[[TABLE:.+]] = arith.constant dense<{{\[}}[2, 1, 0, 0], [1, 2, 1, 0], [0, 1, 2, 1], [0, 0, 1, 2]]> : tensor<4x4xi8>
// CHECK: scf.for
// CHECK: %[[ENTRY:.+]] = tensor.extract %[[TABLE]]
// CHECK: %[[VISIBLE:.+]] = arith.cmpi ne, %[[ENTRY]]
// CHECK: scf.if %[[VISIBLE]]
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %{{.+}}, %c2_i8
// CHECK: scf.if %[[FULL]]
// CHECK: arith.maxsi
// CHECK: arith.cmpi slt
// CHECK: arith.cmpf oeq
func.func @sliding_window(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // The fraction of key tiles visited is measured from the table.
  // expected-remark@+1 {{mask visits 10 of 16 (query, key) tile pairs (62.5%), 4 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %e = arith.subi %j, %i : index
        %distance = arith.maxsi %d, %e : index
        %w = arith.constant 64 : index
        %near = arith.cmpi slt, %distance, %w : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask that reads the head has one table per (batch, head): head 1 sees
// only the first 64 keys.
// CHECK-LABEL: func @per_head
// CHECK: arith.constant dense<{{\[}}[{{\[}}2, 2, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2]], [{{\[}}2, 0, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0]]]> : tensor<2x4x4xi8>
func.func @per_head(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{mask visits 20 of 32 (query, key) tile pairs (62.5%), 20 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %zero = arith.constant 0 : index
        %first = arith.cmpi eq, %h, %zero : index
        %c64 = arith.constant 64 : index
        %early = arith.cmpi slt, %j, %c64 : index
        %t = arith.ori %first, %early : i1
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask that hides no whole tile and shows none wholly needs no table.
// CHECK-LABEL: func @no_hidden_tile
// CHECK-NOT: xi8>
// CHECK-NOT: scf.if
// CHECK: return
func.func @no_hidden_tile(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{mask visits 16 of 16 (query, key) tile pairs (100.0%), 0 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c2 = arith.constant 2 : index
        %r = arith.remui %j, %c2 : index
        %zero = arith.constant 0 : index
        %even = arith.cmpi eq, %r, %zero : index
        attn.yield %even : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask computed with floats has no table: every tile is visited, and a
// remark says why.
// CHECK-LABEL: func @float_mask
// CHECK-NOT: xi8>
func.func @float_mask(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{every key tile is visited: its mask computes with 'arith.sitofp', which the tile table does not evaluate}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %i64 = arith.index_cast %i : index to i64
        %f = arith.sitofp %i64 : i64 to f32
        %half = arith.constant 100.0 : f32
        %t = arith.cmpf olt, %f, %half : f32
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// The score region is inlined where the scores are scaled, before masking.
// CHECK-LABEL: func @soft_cap
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: math.tanh
// CHECK: arith.select
func.func @soft_cap(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  %0 = attn.attention %q, %q, %q {causal = true} : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %cap : f32
        attn.yield %y : f32
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A block table is at most 2^22 entries: beyond, every tile is visited.
// CHECK-LABEL: func @huge_table
// CHECK-NOT: xi8>
func.func @huge_table(%q: tensor<1x1x262144x1xf32>) -> tensor<1x1x262144x1xf32> {
  // expected-remark@+1 {{every key tile is visited: its block table would have 16777216 entries, more than the 4194304 lcc embeds}}
  %0 = attn.attention %q, %q, %q : (tensor<1x1x262144x1xf32>, tensor<1x1x262144x1xf32>, tensor<1x1x262144x1xf32>) -> tensor<1x1x262144x1xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi ule, %j, %i : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x1x262144x1xf32>
}

// -----

// A ring attention's block (2 ranks, seq 512): the queries at rank r's
// share of the positions (chunks r and 3 - r of 4 chunks of 128), the keys
// at the other rank's; causality compares the positions. The block table
// is computed for each rank when compiling (rank 0's early queries see
// none of rank 1's keys and its late ones all; rank 1's queries see rank
// 0's early keys and none of its late ones) and each rank reads its own
// (attn.rank_slice); the scores compare the positions the tensors hold.
// CHECK-LABEL: func @ring_block
// CHECK: %[[TABLES:.+]] = arith.constant dense<{{\[}}[{{\[}}0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 2], [2, 2, 2, 2]], [{{\[}}2, 2, 0, 0], [2, 2, 0, 0], [2, 2, 0, 0], [2, 2, 0, 0]]]> : tensor<2x4x4xi8>
// CHECK: %[[TABLE:.+]] = attn.rank_slice %[[TABLES]] : tensor<2x4x4xi8> -> tensor<1x4x4xi8>
// CHECK: scf.for
// CHECK: tensor.extract %[[TABLE]]
// CHECK: tensor.extract %{{.+}}[%{{.+}}] : tensor<256xi64>
// CHECK: arith.cmpi sle
func.func @ring_block(%q: tensor<1x2x256x16xf32>, %k: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  %queries = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511], [128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383]]> : tensor<2x256xi64>
  %keys = arith.constant dense<[[128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511]]> : tensor<2x256xi64>
  %q1 = attn.rank_slice %queries : tensor<2x256xi64> -> tensor<1x256xi64>
  %qp = tensor.collapse_shape %q1 [[0, 1]] : tensor<1x256xi64> into tensor<256xi64>
  %k1 = attn.rank_slice %keys : tensor<2x256xi64> -> tensor<1x256xi64>
  %kp = tensor.collapse_shape %k1 [[0, 1]] : tensor<1x256xi64> into tensor<256xi64>
  // expected-remark@+1 {{causality visits 8 of 16 (query, key) tile pairs (50.0%), 8 of them unmasked on the busiest rank}}
  %0 = attn.attention %q, %k, %k positions(%qp, %kp) {causal = true} : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<256xi64>, tensor<256xi64>) -> tensor<1x2x256x16xf32>
  return %0 : tensor<1x2x256x16xf32>
}
