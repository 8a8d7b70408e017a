//===- GatheredAttention.h - one query over keys gathered by position -*- C++
//-*-===//
//
// A decode step's attention where the keys a query sees are a few chosen
// positions of its caches (LSH's two chunks, routed attention's window, a
// sparse pattern's keys): gathered by position, scored, softmax, the
// values summed. The forms' cached steps (passes/forms/*/...DecodeStep.cpp)
// share it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_GATHEREDATTENTION_H
#define LCC_PASSES_LOWERTOLINALG_GATHEREDATTENTION_H

#include "passes/LowerToLinalg/TensorBuilder.h"

namespace lcc::lowering {

struct GatheredAttention {
  mlir::Value outputs;   // [rows, groups, v_dim]
  mlir::Value logSumExp; // [rows, groups]; -inf where nothing is seen
};

/// For each (row, group), the query `query` ([rows, dim]) attending to the
/// keys at positions `tokens` ([rows, groups, n] i32; a negative one is an
/// empty place, never seen) of `keys` ([rows, positions, dim]) with the
/// values there (`values`, [rows, positions, v_dim]): scores q·k·`scale`,
/// the token equal to `self` (a 0-d i32, when given: shared QK's own
/// token) -1e5; a (row, group) that sees no key gets zeros.
GatheredAttention attendGathered(TensorBuilder &tb, mlir::Value query,
                                 mlir::Value tokens, mlir::Value keys,
                                 mlir::Value values, double scale,
                                 mlir::Value self = nullptr);

/// attendGathered for one query per (batch, head): `query` [batch, heads,
/// 1, dim], `tokens` [batch * heads, 1, n], caches [batch, heads,
/// positions, *]; the outputs [batch, heads, 1, v_dim].
mlir::Value attendGatheredByHead(TensorBuilder &tb, mlir::Value query,
                                 mlir::Value tokens, mlir::Value keys,
                                 mlir::Value values, double scale);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_GATHEREDATTENTION_H
