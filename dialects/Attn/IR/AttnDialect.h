//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//
//
// The attn dialect, its enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNDIALECT_H
#define LCC_DIALECT_ATTN_IR_ATTNDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/Attn/IR/AttnOpsDialect.h.inc"
#include "dialects/Attn/IR/AttnOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Attn/IR/AttnOpsAttributes.h.inc"

#endif // LCC_DIALECT_ATTN_IR_ATTNDIALECT_H
