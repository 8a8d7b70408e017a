//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNOPS_H
#define LCC_DIALECT_ATTN_IR_ATTNOPS_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/AttnInterfaces.h"
#include "dialects/Attn/IR/AttnKnownAttributes.h"
#include "dialects/Attn/IR/Knobs.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <utility>

#define GET_OP_CLASSES
#include "dialects/Attn/IR/AttnOps.h.inc"

namespace lcc::attn {

/// Values of the LSH rotations ([head_dim, n_hashes, n_buckets / 2]), which
/// the compiled code holds as a constant: 64 MiB of f32.
constexpr int64_t kMaxRotationValues = int64_t(1) << 24;

/// The bucket counts (n1, n2) of factorized LSH hashing for `nBuckets`
/// buckets (attn.lsh_attention's `factorized_hash`): n1 the largest even
/// divisor of nBuckets with n1 * n1 <= nBuckets, n2 = nBuckets / n1, both
/// even; nullopt when nBuckets is not a multiple of 4.
std::optional<std::pair<int64_t, int64_t>> lshHashFactors(int64_t nBuckets);

/// n_buckets an attn.lsh_attention may name: each row's sort counts them.
constexpr int64_t kMaxLSHBuckets = int64_t(1) << 20;

/// Chunks of an attn.lsh_attention over `seq` tokens in chunks of
/// `bucketSize`: the sequence padded to a multiple of two chunks, so that
/// the default bucket count (one per chunk) is even; to a multiple of one
/// when the op names n_buckets (`hasBucketCount`).
inline int64_t lshChunkCount(int64_t seq, int64_t bucketSize,
                             bool hasBucketCount = false) {
  if (hasBucketCount)
    return (seq + bucketSize - 1) / bucketSize;
  return 2 * ((seq + 2 * bucketSize - 1) / (2 * bucketSize));
}

/// n_buckets of an attn.lsh_attention over `seq` tokens in chunks of
/// `bucketSize`: `nBuckets` when the op names it, else one per chunk.
inline int64_t lshBucketCount(int64_t seq, int64_t bucketSize,
                              std::optional<int64_t> nBuckets = {}) {
  return nBuckets ? *nBuckets : lshChunkCount(seq, bucketSize);
}

} // namespace lcc::attn

#endif // LCC_DIALECT_ATTN_IR_ATTNOPS_H
