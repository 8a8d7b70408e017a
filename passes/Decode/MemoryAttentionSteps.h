//===- MemoryAttentionSteps.h - cached steps over a memory ------*- C++ -*-===//
//
// The cached forms of the dialect's attentions over [memory; segment]
// (attn.relative_attention, Transformer-XL's and the compressive memory's;
// attn.adaptive_span_attention), which are model ops rather than forms of
// the registry: their caches hold the memory's keys and values, then the
// segment's, and a step's query sits M keys late, as in the forward.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_DECODE_MEMORYATTENTIONSTEPS_H
#define LCC_PASSES_DECODE_MEMORYATTENTIONSTEPS_H

#include "passes/DecodeStep.h"

#include <functional>

namespace lcc {

/// What fills an attention's caches in prefill and builds its decode step.
struct CachedAttention {
  std::function<DecodeCacheFill> fill;
  std::function<DecodeStepBuild> step;
};

/// The cached form of `op` if it attends over a memory, or none.
std::optional<CachedAttention> lookupMemoryAttentionStep(mlir::Operation *op);

} // namespace lcc

#endif // LCC_PASSES_DECODE_MEMORYATTENTIONSTEPS_H
