//===- Masks.h - the named masks and scores of the examples -----*- C++ -*-===//
//
// The masks and score modifiers that the bundled examples write as attn IR
// (docs/masks.md), stated here a second time from their definitions, so
// that a compiled example is checked against what it is meant to compute:
//
//   sliding:W             |i - j| < W
//   longformer:W,G        |i - j| < W, or i < G, or j < G (global tokens)
//   bigbird:B,G,R,S       in blocks of B positions (qb = i / B, kb = j / B):
//                         |qb - kb| <= 1, or qb < G, or kb < G, or
//                         (qb * 31 + kb * 17 + S) mod 101 < R
//   documents:L1,L2,...   i and j in the same document, the documents
//                         being runs of L1, L2, ... positions
//   local:W,B,A           in windows of W positions (qw = i / W, kw = j / W):
//                         qw - B <= kw <= qw + A (the local-attention
//                         plugin's form)
//   lag:L                 j <= i - L (the first L queries see no key and
//                         get zeros)
//   alibi                 score s + m_h * (j - i), m_h = 2^(-8 (h + 1) / H)
//   softcap:C             score C * tanh(s / C)
//   expr:E                a mask or score as a prefix expression of region
//                         arithmetic (Expressions.h)
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_MASKS_H
#define LCC_TEST_REFERENCE_MASKS_H

#include "Reference.h"

#include <string>

namespace lcc::reference {

/// The mask named by `spec` ("sliding:64", ...); throws ReferenceError on
/// an unknown name or bad parameters.
PositionMask namedMask(const std::string &spec);

/// The score modifier named by `spec` ("alibi", "softcap:30") for an
/// attention with `heads` heads.
ScoreModifier namedScore(const std::string &spec, int64_t heads);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_MASKS_H
