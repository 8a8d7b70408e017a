//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNOPS_H
#define LCC_DIALECT_ATTN_IR_ATTNOPS_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Attn/IR/AttnOps.h.inc"

namespace lcc::attn {

/// Hash rounds an attn.lsh_attention may have. The Reformer uses up to 8;
/// every round multiplies the intermediate results.
constexpr int64_t kMaxHashRounds = 1024;
/// Values of the LSH rotations ([head_dim, n_hashes, n_buckets / 2]), which
/// the compiled code holds as a constant: 64 MiB of f32.
constexpr int64_t kMaxRotationValues = int64_t(1) << 24;

} // namespace lcc::attn

#endif // LCC_DIALECT_ATTN_IR_ATTNOPS_H
