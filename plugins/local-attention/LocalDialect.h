//===- LocalDialect.h - the local dialect -----------------------*- C++ -*-===//

#ifndef LOCAL_ATTENTION_LOCALDIALECT_H
#define LOCAL_ATTENTION_LOCALDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "LocalOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "LocalOps.h.inc"

#endif // LOCAL_ATTENTION_LOCALDIALECT_H
