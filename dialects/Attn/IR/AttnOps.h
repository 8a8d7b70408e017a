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

#endif // LCC_DIALECT_ATTN_IR_ATTNOPS_H
